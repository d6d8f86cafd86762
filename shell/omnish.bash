# omnish bash integration, loaded by `omnish wrap` as `bash --rcfile <this> -i`.
# The lines above this file (written by omnish into a private 0600 file) set:
#   __omnish_token   the session's marker token (never exported)
#   __omnish_login   1 to read the login files instead of ~/.bashrc
#   __omnish_rcfile  the user's --rcfile, or empty
#   __omnish_norc    1 for --norc
#   __omnish_dir     omnish's private directory of startup files (0700, files 0600), kept for
#                    the session so that a shell replacing this one (`exec bash`, `exec zsh`)
#                    is hooked again
#   __omnish_sysrc   1 to read /etc/bash.bashrc first (set by exec.bash)
#   __omnish_nested  1 in a shell started from a command of the recorded shell (nest.bash)
# Markers: see src/record/marker.rs. Every expansion is guarded (`${v-}`) for `set -u` users,
# and builtins are called as builtins against aliases and functions of the same name.
#
# The token lives in unexported shell variables only. No prompt string holds it as text (PS1 is
# often exported, and `echo "$PS1"` prints it): under `promptvars` PS1 and PS2 name the variables
# below, and PS0 runs a function; without it they hold a nonce, announced with the token at each
# prompt and spent when the command starts.

# The markers PS1 and PS2 show, set before the user's startup files run (so `set -a` there does
# not export them).
__omnish_pa=$'\e]133;'"${__omnish_token-}"$';A\a'
__omnish_pb=$'\e]133;'"${__omnish_token-}"$';B\a'
__omnish_pb2=$'\e]133;'"${__omnish_token-}"$';B;k=c\a'

# 1. The user's own startup files, as bash would have read them.
if [[ ${__omnish_login-} == 1 ]]; then
    [[ -r /etc/profile ]] && builtin source /etc/profile
    for __omnish_f in ~/.bash_profile ~/.bash_login ~/.profile; do
        if [[ -r $__omnish_f ]]; then
            builtin source "$__omnish_f"
            break
        fi
    done
    builtin unset __omnish_f
elif [[ ${__omnish_norc-} != 1 ]]; then
    # bash reads /etc/bash.bashrc (Debian's) before the rcfile, --rcfile or not.
    [[ ${__omnish_sysrc-} == 1 && -r /etc/bash.bashrc ]] && builtin source /etc/bash.bashrc
    if [[ -n ${__omnish_rcfile-} ]]; then
        [[ -r $__omnish_rcfile ]] && builtin source "$__omnish_rcfile"
    else
        [[ -r ~/.bashrc ]] && builtin source ~/.bashrc
    fi
fi

# 2. The hooks.
__omnish_histcmd=''
# The nonce the prompt strings hold without `promptvars`, and the wrappers put in PS1 (A also
# marks the prompt when PROMPT_COMMAND was replaced later; B where typed input starts), PS2 (where
# each continuation line starts) and PS0 at the last prompt.
__omnish_nonce=''
__omnish_wa='' __omnish_wb='' __omnish_wb2='' __omnish_ps0_cur=''
# bash expands PS0 once per command line it runs (not for an empty line or Ctrl-C), so it marks
# the output start; from a subshell, which is all PS0 can run. With `shopt -u promptvars` PS0 is
# not expanded: then a plain escape with the nonce marks the start and omnish reads the line off
# the screen.
#
# `exec bash`/`exec zsh` must leave with variables that hook the new shell, and so must a
# typed `bash` or `zsh` (a nested shell), set in this shell before the command runs. PS0 can
# assign (`${v:=word}`) though it runs nothing but subshells: the subshell prints `b` (a bash
# replaces this one), `z` (a zsh does), `f` (a fish does), `n` (a nu does), `B`, `Z`, `F` or `N`
# (a bash, zsh, fish or nu starts nested in the command) or nothing into __omnish_x, and the
# assignments that follow export ENV + POSIXLY_CORRECT (bash reads $ENV in POSIX mode), ZDOTDIR,
# XDG_DATA_DIRS (fish reads vendor_conf.d under each; only when unset, as PS0 can assign nothing
# else) or NU_VENDOR_AUTOLOAD_DIR (nu reads the .nu files there after config.nu), naming the files
# of __omnish_files. They are unset and declared exported in advance (see __omnish_exec_ready).
# All of it sits in the key of an associative array expanded with `+`, so PS0 shows nothing.
declare -A __omnish_h=()
declare -A __omnish_files=([b]=/exec.bash [B]=/nest.bash [z]='' [Z]=/nest [f]=/fish/exec [F]=/fish/nest [n]=/nu-exec [N]=/nu-nest)
# shellcheck disable=SC2016 # expanded by bash each time it shows PS0
__omnish_ps0='${__omnish_h[k${__omnish_x:=$(__omnish_preexec)}${__omnish_xb:=${__omnish_x%[zZfFnN]}}${__omnish_xz:=${__omnish_x%[bBfFnN]}}${__omnish_xf:=${__omnish_x%[bBzZnN]}}${__omnish_xn:=${__omnish_x%[bBzZfF]}}${__omnish_xb:+${ENV:=$__omnish_dir${__omnish_files[$__omnish_xb]}}${POSIXLY_CORRECT:=y}}${__omnish_xz:+${ZDOTDIR:=$__omnish_dir${__omnish_files[$__omnish_xz]}}}${__omnish_xf:+${XDG_DATA_DIRS:=$__omnish_dir${__omnish_files[$__omnish_xf]}:/usr/local/share:/usr/share}}${__omnish_xn:+${NU_VENDOR_AUTOLOAD_DIR:=$__omnish_dir${__omnish_files[$__omnish_xn]}}}]+}'

# Escapes $1 into __omnish_esc: `\` → `\\`, `;`, control bytes and DEL → \xHH.
__omnish_escape() {
    local s=${1-} i h c
    s=${s//\\/\\\\}
    s=${s//;/\\x3b}
    if [[ $s == *[[:cntrl:]]* ]]; then
        for i in {1..31} 127; do
            builtin printf -v h '%02x' "$i"
            # shellcheck disable=SC2059 # the format is the escape that makes the byte
            builtin printf -v c "\\x$h"
            [[ $s == *"$c"* ]] && s=${s//"$c"/\\x$h}
        done
    fi
    __omnish_esc=$s
}

# First in PROMPT_COMMAND: ends the previous command with its real status (omnish ignores the
# end when no command started: empty line, Ctrl-C), reports the cwd and the prompt start, and
# hands the status (and `$_`) on unchanged.
__omnish_precmd() {
    local __omnish_st=$?
    [[ -n ${__omnish_token-} ]] || builtin return "$__omnish_st"
    __omnish_exec_ready
    # A nested shell's announcement, again (nest.bash), before anything it marks.
    if ((${__omnish_again_left:-0} > 0)); then
        builtin printf '%s' "${__omnish_again-}"
        ((--__omnish_again_left)) || builtin unset __omnish_again
    fi
    __omnish_escape "${PWD-}"
    builtin printf '\e]133;%s;D;%s\a' "$__omnish_token" "$__omnish_st"
    # After the end marker (so it covers every key echoed before it): no whole line typed
    # ahead waits for the shell, so the command read what was typed while it ran.
    builtin read -t 0 || builtin printf '\e]633;%s;P;Waiting=0\a' "$__omnish_token"
    builtin printf '\e]633;%s;P;Cwd=%s\a' "$__omnish_token" "$__omnish_esc"
    if ! builtin shopt -q promptvars; then
        builtin printf -v __omnish_nonce '%08x%08x' "${SRANDOM:-$RANDOM}" "${SRANDOM:-$RANDOM}"
        builtin printf '\e]633;%s;P;Nonce=%s\a' "$__omnish_token" "$__omnish_nonce"
    fi
    builtin printf '\e]133;%s;A\a' "$__omnish_token"
    __omnish_histcmd=${HISTCMD-}
    builtin return "$__omnish_st"
}

# Last in PROMPT_COMMAND: marks the end of the prompt (after any PROMPT_COMMAND that rewrote
# PS1, as starship does) and keeps the hooks in place.
__omnish_prompt() {
    local __omnish_st=$?
    [[ -n ${__omnish_token-} ]] || builtin return "$__omnish_st"
    local a b b2
    if builtin shopt -q promptvars; then
        # shellcheck disable=SC2016 # expanded by bash each time it shows the prompt
        a='\[${__omnish_pa-}\]' b='\[${__omnish_pb-}\]' b2='\[${__omnish_pb2-}\]'
    else
        a="\\[\\e]133;${__omnish_nonce-};A\\a\\]"
        b="\\[\\e]133;${__omnish_nonce-};B\\a\\]"
        b2="\\[\\e]133;${__omnish_nonce-};B;k=c\\a\\]"
    fi
    if [[ ${PS1-} != "$a"*"$b" ]]; then
        local p=${PS1-}
        p=${p#"$__omnish_wa"}
        p=${p%"$__omnish_wb"}
        PS1=$a$p$b
    fi
    if [[ ${PS2-} != *"$b2" ]]; then
        local p2=${PS2-}
        p2=${p2%"$__omnish_wb2"}
        PS2=$p2$b2
    fi
    __omnish_wa=$a __omnish_wb=$b __omnish_wb2=$b2
    __omnish_install
    builtin return "$__omnish_st"
}

# Undoes what PS0 set for an exec that did not happen (it failed, or the line was no exec),
# and keeps ENV, POSIXLY_CORRECT and ZDOTDIR, when unset, exported in advance.
__omnish_exec_ready() {
    if [[ -n ${__omnish_xb-} ]]; then
        builtin unset ENV POSIXLY_CORRECT
        builtin set +o posix
    fi
    [[ -n ${__omnish_xz-} ]] && builtin unset ZDOTDIR
    [[ -n ${__omnish_xf-} ]] && builtin unset XDG_DATA_DIRS
    [[ -n ${__omnish_xn-} ]] && builtin unset NU_VENDOR_AUTOLOAD_DIR
    builtin unset __omnish_x __omnish_xb __omnish_xz __omnish_xf __omnish_xn
    [[ -v ENV || -v POSIXLY_CORRECT ]] || builtin declare -gx ENV POSIXLY_CORRECT
    [[ -v ZDOTDIR ]] || builtin declare -gx ZDOTDIR
    [[ -v XDG_DATA_DIRS ]] || builtin declare -gx XDG_DATA_DIRS
    [[ -v NU_VENDOR_AUTOLOAD_DIR ]] || builtin declare -gx NU_VENDOR_AUTOLOAD_DIR
}

# For a line `exec [-l] [-a NAME] bash|zsh|fish|$SHELL [options]`, sets (in the caller) `name` to
# the shell's name, `kind` to `b`, `z`, `f` or `n`, the kind of interactive shell about to replace this one,
# and `why` to the reason it cannot be hooked, if any.
__omnish_exec_kind() {
    [[ ${1-} == *exec* ]] || builtin return 0
    local -a w
    builtin read -ra w <<<"${1-}"
    [[ ${w[0]-} == exec ]] || builtin return 0
    local i=1 cleared=''
    while [[ ${w[i]-} == -* ]]; do
        case ${w[i]} in
        -a) ((i += 2)) ;;
        *c*) cleared=1 && ((i += 1)) ;;
        *) ((i += 1)) ;;
        esac
    done
    local cmd=${w[i]-} arg k
    # shellcheck disable=SC2016 # the words as typed
    case $cmd in '$SHELL' | '${SHELL}' | '"$SHELL"' | '"${SHELL}"') cmd=${SHELL-} ;; esac
    case ${cmd##*/} in
    bash*) k=b ;;
    zsh*) k=z ;;
    fish*) k=f ;;
    nu) k=n ;;
    *) builtin return 0 ;;
    esac
    # A command string or a script: not an interactive shell.
    for arg in "${w[@]:i+1}"; do
        case $arg in -c | -[!-]*c* | [!-]*) builtin return 0 ;; esac
    done
    name=${cmd##*/}
    kind=$k
    # In a nested shell the new shell announces itself (with a token of its own) and takes
    # this one's place.
    [[ ${__omnish_nested-} == 1 ]] && kind=${kind^}
    if [[ -n $cleared ]]; then
        why='exec -c clears its environment'
    else
        __omnish_why
    fi
}

# For a line that starts an interactive bash, zsh or fish nested in this shell (the shell's name or
# path, then only -i, -l, --login: `bash`, `zsh -l`, `/bin/bash --login`), sets (in the caller)
# `name`, `kind` (`B` or `Z`) and `why`, as __omnish_exec_kind does. Anything else on the line
# (a command string, a script, a redirection, a second command, an option that changes the
# startup files) leaves the shell to run as it would without omnish: one command.
__omnish_nest_kind() {
    [[ ${1-} == *bash* || ${1-} == *zsh* || ${1-} == *fish* || ${1-} == *nu* || ${1-} == *shell* ||
        ${1-} == *develop* ]] || builtin return 0
    __omnish_starter_kind "$1"
    [[ -n $kind ]] && builtin return 0
    [[ $1 =~ ^[[:space:]]*([-_./[:alnum:]]+)(([[:space:]]+(-[il]+|--login|--interactive))*)[[:space:]]*$ ]] ||
        builtin return 0
    local cmd=${BASH_REMATCH[1]}
    case ${cmd##*/} in
    bash | bash[0-9]*) kind=B ;;
    zsh | zsh[0-9]*) kind=Z ;;
    fish | fish[0-9]*) kind=F ;;
    nu) kind=N ;;
    *) builtin return 0 ;;
    esac
    name=${cmd##*/}
    __omnish_why
}

# For a line that runs a program starting an interactive shell of its own for a project, with only
# plain words after it (no command to run, no quotes, redirections or second command): sets `name`,
# `kind` and `why` as __omnish_nest_kind does. `poetry shell`, `pipenv shell` and `hatch shell`
# start the shell they run under (they read their parent process): this bash. `nix develop` and
# `nix-shell` start bash whatever the user's shell (`bash --rcfile FILE`, which exec.bash
# honours), unless told to run a command or a build phase instead.
__omnish_starter_kind() {
    local re='^[[:space:]]*(poetry[[:space:]]+shell|pipenv[[:space:]]+shell|hatch[[:space:]]+shell|nix[[:space:]]+develop|nix-shell)(([[:space:]]+[-_./:#@=+,%[:alnum:]]+)*)[[:space:]]*$'
    [[ ${1-} =~ $re ]] || builtin return 0
    local prog=${BASH_REMATCH[1]} arg
    local -a args
    builtin read -ra args <<<"${BASH_REMATCH[2]}"
    for arg in "${args[@]}"; do
        case $arg in
        -c | --command | --run | --phase | --unpack | --configure | --build | --check | --install | \
            --installcheck | --help | --version | -h) builtin return 0 ;;
        esac
        # hatch's --name and --path start a shell other than this one.
        [[ $prog == hatch* && ($arg == --name* || $arg == --path*) ]] && builtin return 0
    done
    name=${prog%%[[:space:]]*}
    kind=B
    __omnish_why
}

# Sets `why` (the caller's) when the shell of `kind` cannot be hooked.
__omnish_why() {
    case $kind in
    b | B)
        [[ -v ENV || -v POSIXLY_CORRECT ]] && why='ENV or POSIXLY_CORRECT is set'
        [[ -r ${__omnish_dir-}${__omnish_files[$kind]} ]] || why="omnish's startup files are gone"
        ;;
    f | F)
        [[ -n ${XDG_DATA_DIRS-} ]] && why='XDG_DATA_DIRS is set'
        [[ -r ${__omnish_dir-}${__omnish_files[$kind]}/fish/vendor_conf.d/omnish-hooks.fish ]] ||
            why="omnish's startup files are gone"
        ;;
    n | N)
        [[ -v NU_VENDOR_AUTOLOAD_DIR ]] && why='NU_VENDOR_AUTOLOAD_DIR is set'
        [[ -r ${__omnish_dir-}${__omnish_files[$kind]}/omnish.nu ]] || why="omnish's startup files are gone"
        ;;
    *)
        [[ -v ZDOTDIR ]] && why='ZDOTDIR is set'
        [[ -r ${__omnish_dir-}${__omnish_files[$kind]}/.zshenv ]] || why="omnish's startup files are gone"
        ;;
    esac
}

# Runs in PS0's subshell just before the command: reports its line and the output start on the
# terminal, and prints the kind of shell an exec brings, for PS0 to prepare its hooks. omnish
# warns when a line it sees is such an exec and the hooks did not announce it (`Exec`): they
# cannot see a line bash kept out of its history.
__omnish_preexec() {
    [[ -n ${__omnish_token-} ]] || builtin return 0
    local line='' name='' kind='' why=''
    {
        __omnish_preexec_marks
        [[ -n $line ]] && __omnish_exec_kind "$line"
        [[ -n $name ]] && builtin printf '\e]633;%s;P;Exec=1\a' "$__omnish_token"
        [[ -n $line && -z $name ]] && __omnish_nest_kind "$line"
        builtin printf '\e]133;%s;C\a' "$__omnish_token"
        if [[ -n $why ]]; then
            builtin printf 'omnish: %s will not be recorded command by command (%s)\n' \
                "$name" "$why"
        fi
    } >/dev/tty
    [[ -n $why ]] || builtin printf '%s' "$kind"
}

__omnish_preexec_marks() {
    if [[ ${HISTCMD-} != "${__omnish_histcmd-}" ]]; then
        # The line went into history (HISTCMD moved), so `history 1` is this line, after
        # history expansion. Otherwise (ignorespace, ignoredups, set +o history) omnish reads
        # the line off the screen.
        if __omnish_last_entry; then
            __omnish_escape "$line"
            builtin printf '\e]633;%s;E;%s\a' "$__omnish_token" "$__omnish_esc"
        fi
    elif [[ ! -o history ]]; then
        # History is off (`set +o history`): every line is kept out on purpose.
        builtin printf '\e]633;%s;P;Private=1\a' "$__omnish_token"
    else
        # Not saved: bash kept it out on purpose (a leading space under ignorespace, a
        # HISTIGNORE pattern), unless it repeats the last entry (ignoredups). omnish reads the
        # line off the screen and compares it with that entry.
        local last=''
        __omnish_last_entry && last=$line
        line=''
        __omnish_escape "$last"
        builtin printf '\e]633;%s;P;Unsaved=%s\a' "$__omnish_token" "$__omnish_esc"
        if [[ :${HISTCONTROL-}: == *:ignorespace:* || :${HISTCONTROL-}: == *:ignoreboth:* ]]; then
            builtin printf '\e]633;%s;P;HistIgnoreSpace=1\a' "$__omnish_token"
        fi
    fi
}

# Sets `line` (the caller's) to the last history entry, without its number.
__omnish_last_entry() {
    local entry
    entry=$(HISTTIMEFORMAT='' builtin history 1)
    # Only the start is matched: a regex over the whole of a long line is slow.
    [[ ${entry:0:64} =~ ^[[:space:]]*[0-9]+[*[:space:]][[:space:]] ]] || builtin return 1
    line=${entry:${#BASH_REMATCH[0]}}
}

# Puts __omnish_precmd first and __omnish_prompt last in PROMPT_COMMAND (string or array, as
# the user has it) and the PS0 hook at the end of PS0. Idempotent; cheap when nothing changed.
__omnish_install() {
    local ps0=${PS0-} want=$__omnish_ps0
    builtin shopt -q promptvars || want="\\e]133;${__omnish_nonce-};C\\a"
    if [[ $ps0 != *"$want" ]]; then
        ps0=${ps0//"$__omnish_ps0"/}
        [[ -n ${__omnish_ps0_cur-} ]] && ps0=${ps0//"$__omnish_ps0_cur"/}
        PS0=$ps0$want
    fi
    __omnish_ps0_cur=$want
    # shellcheck disable=SC2016 # run later by PROMPT_COMMAND, where `$_` is the last argument
    local first='__omnish_precmd "$_"' last='__omnish_prompt' attrs=''
    [[ -v PROMPT_COMMAND ]] && attrs=${PROMPT_COMMAND@a}
    # bash runs every element of an array PROMPT_COMMAND from 5.1 on; before, only element 0.
    if [[ $attrs == *a* ]] && ((BASH_VERSINFO[0] > 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] >= 1))); then
        local n=${#PROMPT_COMMAND[@]} e
        [[ ${PROMPT_COMMAND[0]-} == "$first" && ${PROMPT_COMMAND[n - 1]-} == "$last" ]] && builtin return 0
        local -a kept=()
        for e in "${PROMPT_COMMAND[@]}"; do
            [[ $e == "$first" || $e == "$last" ]] || kept+=("$e")
        done
        PROMPT_COMMAND=("$first" "${kept[@]}" "$last")
    else
        local pc=${PROMPT_COMMAND-}
        [[ $pc == "$first"$'\n'*$'\n'"$last" || $pc == "$first"$'\n'"$last" ]] && builtin return 0
        pc=${pc//"$first"$'\n'/}
        pc=${pc//$'\n'"$last"/}
        # Newlines, not `;`, so a user value ending in `;` stays valid.
        # shellcheck disable=SC2178 # the user's PROMPT_COMMAND is a string here
        PROMPT_COMMAND="$first"$'\n'"${pc:+$pc$'\n'}$last"
    fi
    # An exported PROMPT_COMMAND reaches child shells; let them find harmless functions there
    # (they see no token and only pass `$?` on).
    if [[ $attrs == *x* ]]; then
        builtin export -f __omnish_precmd __omnish_prompt __omnish_install __omnish_escape \
            __omnish_exec_ready
    fi
}

# They need PS0, new in bash 4.4.
if ((BASH_VERSINFO[0] > 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] >= 4))); then
    __omnish_exec_ready
    __omnish_install
else
    builtin printf 'omnish: bash %s has no PS0 (bash 4.4 or later does); commands are not told apart\n' \
        "${BASH_VERSION-}" >&2
fi

# nest.auto: programs the configuration runs through `omnish nest` (__omnish_auto, names omnish
# checked; __omnish_bin, the omnish binary), so that the shells they start are recorded command
# by command. A function of the user's of the same name is left alone; `command ssh` runs the
# program itself.
if [[ -n ${__omnish_token-} && -n ${__omnish_auto-} ]]; then
    for __omnish_f in $__omnish_auto; do
        if [[ $__omnish_f =~ ^[a-z]+$ ]] && ! builtin declare -F "$__omnish_f" >/dev/null; then
            builtin eval "$__omnish_f() { \"\$__omnish_bin\" nest --auto -- $__omnish_f \"\$@\"; }"
        fi
    done
    builtin unset __omnish_f
fi
