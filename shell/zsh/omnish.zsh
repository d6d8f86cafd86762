# omnish zsh hooks (appended to omnish's .zshrc after the user's .zshrc ran).
# Markers: see src/record/marker.rs. Functions use `emulate -L zsh` so user options (nounset,
# sh_word_split, ksh_arrays, ...) cannot change them; `$?` is read before anything else.
# The token lives in an unexported variable (set in .zshenv) and is printed by the hooks only:
# no prompt string holds it.
# A nested zsh that could not take a token of its own runs without the hooks.
[[ -n ${__omnish_token-} ]] || return 0
typeset -g __omnish_esc=''
# The zero-width mark put in front of PROMPT_EOL_MARK while a command runs: zsh prints its
# PROMPT_SP filler ("%" and a line of spaces) before precmd runs, so this tells omnish where the
# command's output ended. zsh expands no parameter there (unless PROMPT_SUBST is set), so it
# carries a nonce announced with the token, spent when the command ends.
typeset -g __omnish_eol=''
typeset -gi __omnish_eol_unset=0

# Escapes $1 into __omnish_esc: `\` → `\\`, `;`, control bytes and DEL → \xHH.
__omnish_escape() {
    emulate -L zsh
    local s=$1 c
    local -i i
    s=${s//\\/\\\\}
    s=${s//;/\\x3b}
    if [[ $s == *[[:cntrl:]]* ]]; then
        for i in {1..31} 127; do
            c=${(#)i}
            s=${s//$c/\\x${(l:2::0:)$(( [##16] i ))}}
        done
    fi
    __omnish_esc=$s
}

__omnish_mark_eol() {
    __omnish_unmark_eol
    [[ -o prompt_sp ]] || return 0
    local nonce
    builtin printf -v nonce '%04x%04x%04x%04x' $RANDOM $RANDOM $RANDOM $RANDOM
    builtin printf '\e]633;%s;P;EndNonce=%s\a' $__omnish_token $nonce
    __omnish_eol=$'%{\e]133;'"$nonce"$';Z\a%}'
    (( ${+PROMPT_EOL_MARK} )) && __omnish_eol_unset=0 || __omnish_eol_unset=1
    PROMPT_EOL_MARK=${__omnish_eol}${PROMPT_EOL_MARK-%B%S%#%s%b}
}

# Gives PROMPT_EOL_MARK back as it was (after zsh printed it: precmd runs after the filler).
__omnish_unmark_eol() {
    [[ -n $__omnish_eol ]] || return 0
    if [[ ${PROMPT_EOL_MARK-} == ${__omnish_eol}* ]]; then
        PROMPT_EOL_MARK=${PROMPT_EOL_MARK#$__omnish_eol}
        if (( __omnish_eol_unset )) && [[ $PROMPT_EOL_MARK == '%B%S%#%s%b' ]]; then
            unset PROMPT_EOL_MARK
        fi
    fi
    __omnish_eol=''
}

# zshaddhistory hooks decide whether a line is saved: one that returns non-zero keeps it out of
# history (1) or out of the history file (2), on purpose, so the line is private. zsh does not
# tell its hooks what the others returned, so omnish runs the user's hooks itself, once each:
# their `zshaddhistory` function (renamed) and their zshaddhistory_functions, taken over at
# every prompt; __omnish_addhistory returns the first non-zero status, as zsh would use.
typeset -gi __omnish_unsaved=0
typeset -ga __omnish_addhistory_functions
__omnish_addhistory() {
    local -i ret=0 r
    local f
    for f in __omnish_user_zshaddhistory "${__omnish_addhistory_functions[@]}"; do
        (( ${+functions[$f]} )) || continue
        "$f" "$@"
        r=$?
        (( ret )) || ret=r
    done
    __omnish_unsaved=$(( ret != 0 ))
    return ret
}

__omnish_take_addhistory() {
    if (( ${+functions[zshaddhistory]} )); then
        functions[__omnish_user_zshaddhistory]=$functions[zshaddhistory]
        unfunction zshaddhistory
    fi
    local f
    for f in $zshaddhistory_functions; do
        [[ $f == __omnish_addhistory ]] || __omnish_addhistory_functions+=($f)
    done
    __omnish_addhistory_functions=(${(u)__omnish_addhistory_functions})
    zshaddhistory_functions=(__omnish_addhistory)
}

__omnish_precmd() {
    local -i st=$?
    emulate -L zsh
    __omnish_exec_undo
    __omnish_unsaved=0
    __omnish_take_addhistory
    # A nested shell's announcement, again (nest.zsh), before anything it marks.
    if (( ${__omnish_again_left:-0} > 0 )); then
        builtin printf '%s' ${__omnish_again-}
        (( --__omnish_again_left )) || builtin unset __omnish_again
    fi
    # The end of the command, if one ran (omnish ignores an end without a start: empty line,
    # Ctrl-C at the prompt), the cwd, and the prompt start.
    __omnish_escape $PWD
    builtin printf '\e]133;%s;D;%d\a' $__omnish_token $st
    # After the end marker (so it covers every key echoed before it): no whole line typed
    # ahead waits for the shell (zselect times out: 1), so the command read what was typed
    # while it ran.
    if (( ${+builtins[zselect]} )); then
        local -a __omnish_ready
        zselect -t 0 -r 0 -a __omnish_ready 2>/dev/null
        (( $? == 1 )) && builtin printf '\e]633;%s;P;Waiting=0\a' $__omnish_token
    fi
    builtin printf '\e]633;%s;P;Cwd=%s\a\e]133;%s;A\a' \
        $__omnish_token $__omnish_esc $__omnish_token
    __omnish_typed=''
    __omnish_unmark_eol
    # Keep the preexec hook last, so its marker comes right before the command's output.
    # (precmd_functions is put right from preexec: never change the array being run.)
    if [[ ${preexec_functions[-1]-} != __omnish_preexec ]]; then
        preexec_functions=(${preexec_functions:#__omnish_preexec} __omnish_preexec)
    fi
    return st
}

# The line editor's buffer as typed, before history expansion (`!!`, `^a^b`); one line per
# continuation prompt.
typeset -g __omnish_typed=''
__omnish_line_finish() {
    __omnish_typed+=${__omnish_typed:+$'\n'}$BUFFER
}

# What __omnish_exec_prepare exported for an exec: `b`, `z` or empty; and ZDOTDIR before it;
# the one line to show when the new shell cannot be hooked.
typeset -g __omnish_exported='' __omnish_saved_zdotdir='' __omnish_exec_msg=''
typeset -gi __omnish_saved_zdotdir_set=0 __omnish_saved_zdotdir_x=0 __omnish_saved_xdg_set=0
typeset -g __omnish_saved_xdg=''

# For a line `exec [-l] [-a NAME] bash|zsh|$SHELL [options]`, exports what hooks the shell that
# is about to replace this one (a line that starts a shell nested in this one goes to
# __omnish_nest_prepare): ZDOTDIR for zsh (omnish's startup files, as at the start), ENV
# and POSIXLY_CORRECT for bash (a bash in POSIX mode reads $ENV: exec.bash). When that cannot be
# done, keeps the one line saying so in __omnish_exec_msg. Announces the exec to omnish (which
# warns about an exec the hooks did not see).
__omnish_exec_prepare() {
    emulate -L zsh
    [[ $1 == *(exec|bash|zsh|fish|nu|shell|develop)* ]] || return 0
    local -a w
    w=(${(z)1})
    [[ ${w[1]-} == exec ]] || {
        __omnish_nest_prepare $w
        return 0
    }
    local -i i=2
    local cleared=
    while [[ ${w[i]-} == -* ]]; do
        case ${w[i]} in
        (-a) (( i += 2 )) ;;
        (*c*) cleared=1; (( i += 1 )) ;;
        (*) (( i += 1 )) ;;
        esac
    done
    local cmd=${(Q)w[i]-} kind arg
    [[ $cmd == '$SHELL' || $cmd == '${SHELL}' ]] && cmd=${SHELL-}
    case ${cmd:t} in
    (bash*) kind=b ;;
    (zsh*) kind=z ;;
    (fish*) kind=f ;;
    (nu) kind=n ;;
    (*) return 0 ;;
    esac
    # A command string or a script: not an interactive shell.
    for arg in "${(@)w[i+1,-1]}"; do
        case $arg in (-c|-[^-]#c*|[^-]*) return 0 ;; esac
    done
    builtin printf '\e]633;%s;P;Exec=1\a' $__omnish_token
    if [[ -n $cleared ]]; then
        __omnish_exec_msg="omnish: ${cmd:t} will not be recorded command by command (exec -c clears its environment)"
        return 0
    fi
    # In a nested shell the new shell announces itself (with a token of its own) and takes
    # this one's place.
    __omnish_export $kind ${cmd:t} $(( ${__omnish_nested:-0} == 1 ))
}

# For a line that starts an interactive bash or zsh nested in this shell (its name or path,
# then only -i, -l, --login: `bash`, `zsh -l`), exports what hooks it, as for an exec. Anything
# else on the line (a command string, a script, a redirection, a second command, an option that
# changes the startup files) leaves the shell to run as it would without omnish: one command.
__omnish_nest_prepare() {
    emulate -L zsh
    setopt local_options extended_glob
    (( $# >= 1 )) || return 0
    local cmd=$1 arg kind
    [[ $cmd == [-_./[:alnum:]]## ]] || return 0
    __omnish_starter_prepare "$@" && return 0
    case ${cmd:t} in
    (bash|bash[0-9]*) kind=b ;;
    (zsh|zsh[0-9]*) kind=z ;;
    (fish|fish[0-9]*) kind=f ;;
    (nu) kind=n ;;
    (*) return 0 ;;
    esac
    for arg in "${(@)argv[2,-1]}"; do
        [[ $arg == (-[il]##|--login|--interactive) ]] || return 0
    done
    __omnish_export $kind ${cmd:t} 1
}

# For a line that runs a program starting an interactive shell of its own for a project, with only
# plain words after it (no command to run, no quotes or redirections), exports what hooks that shell
# and returns 0. `poetry shell`, `pipenv shell` and `hatch shell` start the shell they run under
# (they read their parent process): this zsh. `nix develop` and `nix-shell` start bash whatever
# the user's shell (`bash --rcfile FILE`, which exec.bash honours), unless told to run a command
# or a build phase.
__omnish_starter_prepare() {
    emulate -L zsh
    setopt local_options extended_glob
    local kind name arg
    if [[ ( $1 == poetry || $1 == pipenv || $1 == hatch ) && ${2-} == shell ]]; then
        kind=z name=$1
        shift 2
    elif [[ $1 == nix && ${2-} == develop ]]; then
        kind=b name=nix
        shift 2
    elif [[ $1 == nix-shell ]]; then
        kind=b name=nix-shell
        shift
    else
        return 1
    fi
    for arg; do
        [[ $arg == [-_./:#@=+,%[:alnum:]]## ]] || return 0
        case $arg in
        (-c|--command|--run|--phase|--unpack|--configure|--build|--check|--install|--installcheck|--help|--version|-h)
            return 0 ;;
        esac
        # hatch's --name and --path start a shell other than this one.
        [[ $name == hatch && $arg == --(name|path)* ]] && return 0
    done
    __omnish_export $kind $name 1
}

# Exports what hooks the bash (`b`), zsh (`z`) or nu (`n`) named $2 about to start: ENV and
# POSIXLY_CORRECT for bash (a bash in POSIX mode reads $ENV), ZDOTDIR for zsh,
# NU_VENDOR_AUTOLOAD_DIR for nu; with $3 = 1, the files of a shell that takes a token of its own
# (nest.bash, nest/, nu-nest/), else those of a shell that replaces this one (exec.bash, omnish's
# directory, nu-exec/). When that cannot be done, keeps the one
# line saying so in __omnish_exec_msg.
__omnish_export() {
    local kind=$1 name=$2 why= file
    if [[ $kind == b ]]; then
        (( $3 )) && file=$__omnish_dir/nest.bash || file=$__omnish_dir/exec.bash
        (( ${+ENV} || ${+POSIXLY_CORRECT} )) && why='ENV or POSIXLY_CORRECT is set'
        [[ -r $file ]] || why="omnish's startup files are gone"
    elif [[ $kind == f ]]; then
        (( $3 )) && file=$__omnish_dir/fish/nest || file=$__omnish_dir/fish/exec
        [[ -r $file/fish/vendor_conf.d/omnish-hooks.fish ]] || why="omnish's startup files are gone"
    elif [[ $kind == n ]]; then
        # nu reads the .nu files of NU_VENDOR_AUTOLOAD_DIR after its config.nu.
        (( $3 )) && file=$__omnish_dir/nu-nest || file=$__omnish_dir/nu-exec
        (( ${+NU_VENDOR_AUTOLOAD_DIR} )) && why='NU_VENDOR_AUTOLOAD_DIR is set'
        [[ -r $file/omnish.nu ]] || why="omnish's startup files are gone"
    else
        (( $3 )) && file=$__omnish_dir/nest || file=$__omnish_dir
        [[ -r $file/.zshenv ]] || why="omnish's startup files are gone"
    fi
    if [[ -n $why ]]; then
        __omnish_exec_msg="omnish: $name will not be recorded command by command ($why)"
        return 0
    fi
    if [[ $kind == b ]]; then
        export ENV=$file POSIXLY_CORRECT=y
    elif [[ $kind == f ]]; then
        # fish reads fish/vendor_conf.d under each of XDG_DATA_DIRS; omnish's file there puts
        # the value back (unset, when only the XDG default follows omnish's directory).
        __omnish_saved_xdg_set=${+XDG_DATA_DIRS}
        __omnish_saved_xdg=${XDG_DATA_DIRS-}
        export XDG_DATA_DIRS=$file:${XDG_DATA_DIRS:-/usr/local/share:/usr/share}
    elif [[ $kind == n ]]; then
        export NU_VENDOR_AUTOLOAD_DIR=$file
    else
        __omnish_saved_zdotdir_set=${+ZDOTDIR}
        __omnish_saved_zdotdir=${ZDOTDIR-}
        [[ ${(t)ZDOTDIR-} == *export* ]] && __omnish_saved_zdotdir_x=1 || __omnish_saved_zdotdir_x=0
        export ZDOTDIR=$file
    fi
    __omnish_exported=$kind
}

# The exec did not happen (it failed): undo what __omnish_exec_prepare exported.
__omnish_exec_undo() {
    case $__omnish_exported in
    (b) unset ENV POSIXLY_CORRECT ;;
    (f)
        if (( __omnish_saved_xdg_set )); then
            XDG_DATA_DIRS=$__omnish_saved_xdg
        else
            unset XDG_DATA_DIRS
        fi
        ;;
    (n) unset NU_VENDOR_AUTOLOAD_DIR ;;
    (z)
        if (( __omnish_saved_zdotdir_set )); then
            ZDOTDIR=$__omnish_saved_zdotdir
            (( __omnish_saved_zdotdir_x )) || typeset -g +x ZDOTDIR
        else
            unset ZDOTDIR
        fi
        ;;
    esac
    __omnish_exported=''
}

__omnish_preexec() {
    emulate -L zsh
    # First, so the end marker comes before what other precmd hooks print.
    if [[ ${precmd_functions[1]-} != __omnish_precmd ]]; then
        precmd_functions=(__omnish_precmd ${precmd_functions:#__omnish_precmd})
    fi
    __omnish_mark_eol
    # A line HIST_IGNORE_SPACE keeps out of history is private (omnish decides what to keep).
    if [[ -o hist_ignore_space && ( $1 == [[:blank:]]* || $__omnish_typed == [[:blank:]]* ) ]]; then
        builtin printf '\e]633;%s;P;HistIgnoreSpace=1\a' $__omnish_token
    fi
    # A zshaddhistory hook kept it out of history.
    if (( __omnish_unsaved )); then
        builtin printf '\e]633;%s;P;Private=1\a' $__omnish_token
        __omnish_unsaved=0
    fi
    if [[ -n $__omnish_typed ]]; then
        __omnish_escape $__omnish_typed
        builtin printf '\e]633;%s;P;Typed=%s\a' $__omnish_token $__omnish_esc
        __omnish_typed=''
    fi
    __omnish_exec_prepare $1
    __omnish_escape $1
    builtin printf '\e]633;%s;E;%s\a\e]133;%s;C\a' $__omnish_token $__omnish_esc $__omnish_token
    if [[ -n $__omnish_exec_msg ]]; then
        print -r -- $__omnish_exec_msg
        __omnish_exec_msg=''
    fi
}

typeset -ga precmd_functions preexec_functions zshaddhistory_functions
() {
    emulate -L zsh
    # zselect tells whether a line typed ahead waits, without reading it.
    zmodload -F zsh/zselect b:zselect 2>/dev/null
    __omnish_take_addhistory
    precmd_functions=(__omnish_precmd ${precmd_functions:#__omnish_precmd})
    preexec_functions=(${preexec_functions:#__omnish_preexec} __omnish_preexec)
    # Keeps a zle-line-finish widget the user defined.
    builtin autoload -Uz add-zle-hook-widget 2>/dev/null &&
        add-zle-hook-widget line-finish __omnish_line_finish 2>/dev/null
}

# nest.auto: programs the configuration runs through `omnish nest` (__omnish_auto, names omnish
# checked; __omnish_bin, the omnish binary), so that the shells they start are recorded command
# by command. A function of the user's of the same name is left alone; `command ssh` runs the
# program itself.
() {
    emulate -L zsh
    [[ -n ${__omnish_token-} && -n ${__omnish_auto-} ]] || return 0
    local f
    for f in ${=__omnish_auto}; do
        [[ $f =~ '^[a-z]+$' ]] || continue
        (( ${+functions[$f]} )) && continue
        functions[$f]="\"\$__omnish_bin\" nest --auto -- $f \"\$@\""
    done
}
