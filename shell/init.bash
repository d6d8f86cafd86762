# omnish key bindings (and, with --wrap, a recorded shell), printed by `omnish init bash` for
# `eval "$(omnish init bash)"` at the end of ~/.bashrc. The lines above this file (printed by
# omnish) set:
#   __omnish_bin       omnish's absolute path
#   __omnish_ask_key   the key for `omnish ask`, readline syntax (\C-xa)
#   __omnish_fix_key   the key for `omnish fix`
#   __omnish_pause_key the key for `omnish pause --toggle` (empty: none)
#   __omnish_pick_key  the key for `omnish ask --pick` (empty: none)
#   __omnish_wrap      1 to replace this shell with a recorded one: omnish found this terminal
#                      can be recorded, is not recorded yet and was not wrapped from here before
#   __omnish_tty       this terminal, remembered so the recorded shell is started once
# Nothing happens in shells that are not interactive (scripts, `bash -c`).

if [[ $- == *i* ]]; then
    if [[ ${__omnish_wrap-} == 1 && -t 0 && -t 1 ]]; then
        if [[ -x ${__omnish_bin-} ]]; then
            export OMNISH_INIT_WRAPPED="${__omnish_tty-}"
            if builtin shopt -q login_shell; then
                builtin exec "$__omnish_bin" wrap "${BASH:-bash}" -l
            else
                builtin exec "$__omnish_bin" wrap "${BASH:-bash}"
            fi
        fi
        builtin printf 'omnish: cannot run %s; this shell is not recorded\n' "${__omnish_bin-omnish}" >&2
    fi

    # The answer streams below the line; bash then redraws the prompt and the line. bash has
    # cleared the line being edited: it is shown again first (the prompt's last line without
    # its invisible \[...\] parts, which hold omnish's markers), so it stays above the answer.
    __omnish_show_line() {
        local __omnish_p=${PS1@P} __omnish_shown=''
        while [[ $__omnish_p == *$'\001'*$'\002'* ]]; do
            __omnish_shown+=${__omnish_p%%$'\001'*}
            __omnish_p=${__omnish_p#*$'\002'}
        done
        __omnish_shown+=$__omnish_p
        builtin printf '%s%s\n' "${__omnish_shown##*$'\n'}" "${READLINE_LINE-}"
    }

    __omnish_ask_widget() {
        __omnish_show_line
        "$__omnish_bin" ask </dev/null
    }

    # The corrected command replaces the line, to edit and run (nothing runs here). omnish runs
    # as a command of its own, not inside $(...), so that Ctrl-C reaches it and not this shell
    # (which would drop the line being edited); its answer goes through a private file.
    __omnish_fix_widget() {
        local __omnish_cmd='' __omnish_out
        __omnish_out=$(command mktemp "${TMPDIR:-/tmp}/omnish-fix.XXXXXX") || builtin return 0
        # read, not $(<file), which bash 5.2 garbles inside a bind -x command.
        if "$__omnish_bin" fix </dev/null >|"$__omnish_out"; then
            IFS= builtin read -r -d '' __omnish_cmd <"$__omnish_out"
            __omnish_cmd=${__omnish_cmd%$'\n'}
        fi
        command rm -f -- "$__omnish_out"
        [[ -n $__omnish_cmd ]] || builtin return 0
        READLINE_LINE=$__omnish_cmd
        READLINE_POINT=${#__omnish_cmd}
    }

    # Pauses recording, or resumes it (the recorder takes the word from the terminal; the line
    # being edited runs paused, or not, when it runs). What omnish says goes below the line.
    __omnish_pause_widget() {
        __omnish_show_line
        "$__omnish_bin" pause --toggle </dev/null
    }

    # Lists recent commands to pick (fzf, else a numbered list) and asks about those picked;
    # Esc picks nothing and asks nothing.
    __omnish_pick_widget() {
        __omnish_show_line
        "$__omnish_bin" ask --pick </dev/null
    }

    builtin bind -m emacs -x "\"${__omnish_ask_key-}\": __omnish_ask_widget"
    builtin bind -m emacs -x "\"${__omnish_fix_key-}\": __omnish_fix_widget"
    if [[ -n ${__omnish_pause_key-} ]]; then
        builtin bind -m emacs -x "\"$__omnish_pause_key\": __omnish_pause_widget"
    fi
    if [[ -n ${__omnish_pick_key-} ]]; then
        builtin bind -m emacs -x "\"$__omnish_pick_key\": __omnish_pick_widget"
    fi
fi
builtin unset __omnish_wrap __omnish_tty
