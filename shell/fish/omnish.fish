# omnish fish integration: the hooks. Loaded by `omnish wrap` as
# `fish --init-command 'source <private dir>/omnish.fish'`, which fish runs after config.fish,
# conf.d/ and the user's prompt (so the user's configuration runs unchanged, and the hooks'
# event handlers come after the user's); by a fish that replaces a recorded shell or is started
# from one, from vendor_conf.d (vendor.fish: before config.fish, so the user's fish_preexec
# handlers come after this one's, which the prompt hook puts last again); by a fish on the far side
# of `omnish nest`, through --init-command too (shell/nest/stage2.sh).
# The lines above this file (written by omnish into a private 0600 file) set:
#   __omnish_token   the session's marker token (a global, never exported)
#   __omnish_dir     omnish's private directory of startup files (0700, files 0600), kept for
#                    the session so that a shell replacing this one (`exec fish`, `exec bash`)
#                    is hooked again
#   __omnish_nested  1 in a shell started from a command of the recorded shell (nest.fish)
#   __omnish_auto, __omnish_bin   nest.auto (see the end of this file)
# Markers: see src/record/marker.rs. fish runs the handlers of an event in the order they
# were defined and gives each the command's `$status` and `$pipestatus`, and puts them back for
# the next: the hooks cannot change what the user's prompt shows.
#
# The token lives in a global variable only (no prompt string, no function body holds it);
# `set -gx` of everything would export it, so each prompt makes it unexported again.

set -q __omnish_token[1]; and test -n "$__omnish_token"; or return 0

# The control characters the escape turns into \xHH (newline is split on before).
set -g __omnish_cc
set -g __omnish_cx
for __omnish_h in 01 02 03 04 05 06 07 08 09 0b 0c 0d 0e 0f 10 11 12 13 14 15 16 17 18 19 1a 1b 1c 1d 1e 1f 7f
    set -a __omnish_cc (printf "\\x$__omnish_h")
    set -a __omnish_cx "\\x$__omnish_h"
end
set -e __omnish_h

# Escapes $argv[1] into __omnish_esc: `\` → `\\`, `;`, control bytes and DEL → \xHH.
function __omnish_escape
    set -l parts (string split \n -- $argv[1])
    set parts (string replace -a -- '\\' '\\\\' $parts | string replace -a -- ';' '\\x3b')
    if string match -qr '[\x01-\x1f\x7f]' -- $parts
        for i in (seq (count $__omnish_cc))
            set parts (string replace -a -- $__omnish_cc[$i] $__omnish_cx[$i] $parts)
        end
    end
    set -g __omnish_esc (string join '\x0a' -- $parts)
end

# 1 once the command's end was marked (fish_postexec), so the prompt marks none; 0 at the start,
# so the first prompt ends the `exec fish` that started this shell, if one did.
set -g __omnish_ended 0

# Ends the command with its status, before anything else prints at the prompt (fish_prompt
# handlers). A user's fish_postexec handler defined before this one prints before the end mark,
# and so into the command's output.
function __omnish_postexec --on-event fish_postexec
    set -l st $status
    __omnish_exec_undo
    printf '\e]133;%s;D;%s\a' $__omnish_token $st
    # After the end marker (so it covers every key echoed before it): nothing typed waits for
    # the shell, so the command read what was typed while it ran. fish has no builtin that looks
    # at the terminal's input without reading it (`read` has no timeout); bash's `read -t 0`
    # does (select, nothing read). The terminal is in fish's modes here (not line by line): any
    # key waiting counts, a stricter test than bash's whole line. That costs a process: only
    # after a command that ran 200 ms or more (one that reads what is typed runs that long; a
    # few ms beside it); after a shorter one, or without bash, nothing is said (the recorder
    # then does as it must when it cannot know).
    if test "$CMD_DURATION" -ge 200 2>/dev/null; and command -q bash
        and not command env -u BASH_ENV -u ENV bash -c 'read -t 0' 2>/dev/null
        printf '\e]633;%s;P;Waiting=0\a' $__omnish_token
    end
    set -g __omnish_ended 1
end

# At each new prompt (not at a repaint): the end, when no command ran (empty line, Ctrl-C: omnish
# ignores an end without a start), the cwd and the prompt start.
function __omnish_prompt --on-event fish_prompt
    set -l st $status
    # A nested shell's announcement, again (nest.fish), before anything it marks at the prompt.
    if set -q __omnish_again_left; and test $__omnish_again_left -gt 0
        printf '%s' $__omnish_again
        set __omnish_again_left (math $__omnish_again_left - 1)
        test $__omnish_again_left -gt 0; or set -e __omnish_again
    end
    if test $__omnish_ended != 1
        printf '\e]133;%s;D;%s\a' $__omnish_token $st
    end
    set -g __omnish_ended 0
    set -q --export __omnish_token; and set -gu __omnish_token $__omnish_token
    __omnish_escape $PWD
    printf '\e]633;%s;P;Cwd=%s\a\e]133;%s;A\a' $__omnish_token $__omnish_esc $__omnish_token
    # Keep the preexec handler last, so its mark comes right before the command's output:
    # redefining a function puts its handler at the end.
    set -l h (functions --handlers-type generic | string match -r '^fish_preexec .*')
    if test "$h[-1]" != 'fish_preexec __omnish_preexec'
        function __omnish_preexec --on-event fish_preexec
            __omnish_preexec_marks $argv
        end
    end
end

# Right before the command runs, last of the fish_preexec handlers: the line exactly as typed
# (fish_preexec's argument; fish has no history expansion), whether it is private, and the
# output start.
function __omnish_preexec --on-event fish_preexec
    __omnish_preexec_marks $argv
end

function __omnish_preexec_marks
    set -g __omnish_ended 0
    set -l line $argv[1]
    # fish keeps a line starting with a space out of its history; `fish --private` (or
    # fish_private_mode) keeps every line out; fish 4's fish_should_add_to_history decides too.
    if string match -q ' *' -- $line
        printf '\e]633;%s;P;HistIgnoreSpace=1\a' $__omnish_token
    end
    if set -q fish_private_mode[1]; and test -n "$fish_private_mode"
        printf '\e]633;%s;P;Private=1\a' $__omnish_token
    else if functions -q fish_should_add_to_history; and not fish_should_add_to_history $line >/dev/null 2>&1
        printf '\e]633;%s;P;Private=1\a' $__omnish_token
    end
    set -g __omnish_exec_msg ''
    __omnish_exec_prepare $line
    __omnish_escape $line
    printf '\e]633;%s;E;%s\a\e]133;%s;C\a' $__omnish_token $__omnish_esc $__omnish_token
    if test -n "$__omnish_exec_msg"
        printf '%s\n' $__omnish_exec_msg
        set -g __omnish_exec_msg ''
    end
end

# What __omnish_exec_prepare exported for an exec or a nested shell (`b`, `z`, `f`, or empty),
# and what it replaced, for __omnish_exec_undo; the one line to show when the new shell cannot be
# hooked.
set -g __omnish_exported ''
set -g __omnish_saved
set -g __omnish_exec_msg ''

# For a line `exec bash|zsh|fish|$SHELL [options]`, exports what hooks the shell that is about to
# replace this one: ENV and POSIXLY_CORRECT for bash (a bash in POSIX mode reads $ENV:
# exec.bash), ZDOTDIR for zsh (omnish's startup files, as at the start), XDG_DATA_DIRS for fish
# (a fish reads vendor_conf.d in each of them: omnish's puts the user's value back first). For a
# line that starts an interactive bash, zsh or fish nested in this one (its name or path, then
# only -i, -l, --login), the same, naming the files of a shell that takes a token of its own.
# Anything else on the line (a command string, a script, a redirection, a second command)
# leaves the shell to run as it would without omnish: one command.
function __omnish_exec_prepare
    string match -qr 'exec|bash|zsh|fish|shell|develop' -- $argv[1]; or return 0
    set -l w (string split -n ' ' -- (string trim -- $argv[1]))
    set -l nest 1
    if test "$w[1]" = exec
        set nest 0
        set -e w[1]
    end
    set -q w[1]; or return 0
    set -l cmd $w[1]
    if test $nest = 0
        contains -- $cmd '$SHELL' '{$SHELL}' '"$SHELL"'; and set cmd $SHELL[1]
    else
        string match -qr '^[-_./[:alnum:]]+$' -- $cmd; or return 0
    end
    set -l name (string replace -r '.*/' '' -- $cmd)
    set -l kind
    # A program that starts an interactive shell of its own for a project, with only plain words
    # after it: `poetry shell`, `pipenv shell` and `hatch shell` start the shell they run under
    # (they read their parent process): this fish. `nix develop` and `nix-shell` start bash
    # whatever the user's shell (`bash --rcfile FILE`, which exec.bash honours), unless told to
    # run a command or a phase.
    set -l starter 0
    if test $nest = 1
        if contains -- "$w[1]" poetry pipenv hatch; and test "$w[2]" = shell
            set kind f
            set starter 2
        else if test "$w[1]" = nix -a "$w[2]" = develop
            set kind b
            set starter 2
        else if test "$w[1]" = nix-shell
            set kind b
            set starter 1
        end
    end
    if test $starter != 0
        set -l args
        set -q w[(math $starter + 1)]; and set args $w[(math $starter + 1)..-1]
        for arg in $args
            string match -qr '^[-_./:#@=+,%[:alnum:]]+$' -- $arg; or return 0
            contains -- $arg -c --command --run --phase --unpack --configure --build --check \
                --install --installcheck --help --version -h; and return 0
            # hatch's --name and --path start a shell other than this one.
            test "$w[1]" = hatch; and string match -qr '^--(name|path)' -- $arg; and return 0
        end
    else
        switch $name
            case 'bash*'
                set kind b
            case 'zsh*'
                set kind z
            case 'fish*'
                set kind f
            case '*'
                return 0
        end
    end
    for arg in $w[2..-1]
        test $starter != 0; and break
        if test $nest = 1
            string match -qr '^(-[il]+|--login|--interactive)$' -- $arg; or return 0
        else
            # A command string or a script: not an interactive shell.
            string match -qr '^(-c|-[^-]*c.*|[^-].*|--command.*|-C|--init-command.*)$' -- $arg; and return 0
        end
    end
    if test $nest = 0
        printf '\e]633;%s;P;Exec=1\a' $__omnish_token
        # In a nested shell the new shell announces itself (with a token of its own) and
        # takes this one's place.
        test "$__omnish_nested" = 1; and set nest 1
    end
    set -l why
    set -l file
    switch $kind
        case b
            test $nest = 1; and set file $__omnish_dir/nest.bash; or set file $__omnish_dir/exec.bash
            set -q ENV; or set -q POSIXLY_CORRECT; and set why 'ENV or POSIXLY_CORRECT is set'
            test -r $file; or set why "omnish's startup files are gone"
        case z
            test $nest = 1; and set file $__omnish_dir/nest; or set file $__omnish_dir
            set -q ZDOTDIR; and set why 'ZDOTDIR is set'
            test -r $file/.zshenv; or set why "omnish's startup files are gone"
        case f
            test $nest = 1; and set file $__omnish_dir/fish/nest; or set file $__omnish_dir/fish/exec
            test -r $file/fish/vendor_conf.d/omnish-hooks.fish; or set why "omnish's startup files are gone"
    end
    if test -n "$why"
        set -g __omnish_exec_msg "omnish: $name will not be recorded command by command ($why)"
        return 0
    end
    switch $kind
        case b
            set -gx ENV $file
            set -gx POSIXLY_CORRECT y
        case z
            set -gx ZDOTDIR $file
        case f
            # Put back by the new fish (vendor.fish): unset, when it ends in the XDG default.
            set -g __omnish_saved (set -q XDG_DATA_DIRS; and echo 1; or echo 0) "$XDG_DATA_DIRS"
            if set -q XDG_DATA_DIRS
                set -gx XDG_DATA_DIRS "$file:$XDG_DATA_DIRS"
            else
                set -gx XDG_DATA_DIRS "$file:/usr/local/share:/usr/share"
            end
    end
    set -g __omnish_exported $kind
end

# The exec did not happen (it failed), or the nested shell ended: undo what
# __omnish_exec_prepare exported.
function __omnish_exec_undo
    switch $__omnish_exported
        case b
            set -e ENV POSIXLY_CORRECT
        case z
            set -e ZDOTDIR
        case f
            if test "$__omnish_saved[1]" = 1
                set -gx XDG_DATA_DIRS $__omnish_saved[2]
            else
                set -e XDG_DATA_DIRS
            end
    end
    set -g __omnish_exported ''
end

# nest.auto: programs the configuration runs through `omnish nest` (__omnish_auto, names omnish
# checked; __omnish_bin, the omnish binary), so that the shells they start are recorded command
# by command. A function of the user's of the same name is left alone; `command ssh` runs the
# program itself.
if set -q __omnish_auto[1]
    for __omnish_f in (string split -n ' ' -- $__omnish_auto)
        if string match -qr '^[a-z]+$' -- $__omnish_f; and not functions -q $__omnish_f
            eval "function $__omnish_f; \$__omnish_bin nest --auto -- $__omnish_f \$argv; end"
        end
    end
    set -e __omnish_f
end
