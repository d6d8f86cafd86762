# omnish key bindings (and, with --wrap, a recorded shell), printed by `omnish init zsh` for
# `eval "$(omnish init zsh)"` at the end of ~/.zshrc. The lines above this file (printed by
# omnish) set:
#   __omnish_bin       omnish's absolute path
#   __omnish_ask_key   the key for `omnish ask`, readline syntax (\C-xa), which bindkey reads
#   __omnish_fix_key   the key for `omnish fix`
#   __omnish_pause_key the key for `omnish pause --toggle` (empty: none)
#   __omnish_pick_key  the key for `omnish ask --pick` (empty: none)
#   __omnish_wrap      1 to replace this shell with a recorded one: omnish found this terminal
#                      can be recorded, is not recorded yet and was not wrapped from here before
#   __omnish_tty       this terminal, remembered so the recorded shell is started once
# Nothing happens in shells that are not interactive (scripts, `zsh -c`).

if [[ -o interactive ]]; then
    if [[ ${__omnish_wrap-} == 1 && -t 0 && -t 1 ]]; then
        if [[ -x ${__omnish_bin-} ]]; then
            export OMNISH_INIT_WRAPPED="${__omnish_tty-}"
            # This zsh's own binary, else the first on PATH.
            __omnish_zsh=${${:-/proc/$$/exe}:A}
            [[ -x $__omnish_zsh && ${__omnish_zsh:t} == zsh* ]] || __omnish_zsh=zsh
            if [[ -o login ]]; then
                exec "$__omnish_bin" wrap "$__omnish_zsh" -l
            else
                exec "$__omnish_bin" wrap "$__omnish_zsh"
            fi
        fi
        print -ru2 -- "omnish: cannot run ${__omnish_bin-omnish}; this shell is not recorded"
    fi

    # The answer streams below the line; zle then redraws the prompt and the line (zle -I).
    __omnish_ask_widget() {
        zle -I
        "$__omnish_bin" ask </dev/null
    }

    # The corrected command replaces the line, to edit and run (nothing runs here). omnish runs
    # as a command of its own, not inside $(...), so that Ctrl-C reaches it and not zle (which
    # would drop the line being edited); its answer goes through a private file.
    __omnish_fix_widget() {
        local cmd='' out
        zle -I
        out=$(command mktemp "${TMPDIR:-/tmp}/omnish-fix.XXXXXX") || return 0
        if "$__omnish_bin" fix </dev/null >|"$out"; then
            cmd=$(<"$out")
        fi
        command rm -f -- "$out"
        [[ -n $cmd ]] || return 0
        BUFFER=$cmd
        CURSOR=${#BUFFER}
    }

    # Pauses recording, or resumes it (the recorder takes the word from the terminal; the line
    # being edited runs paused, or not, when it runs). What omnish says goes below the line.
    __omnish_pause_widget() {
        zle -I
        "$__omnish_bin" pause --toggle </dev/null
    }

    __omnish_pick_widget() {
        zle -I
        "$__omnish_bin" ask --pick </dev/null
    }

    zle -N __omnish_ask_widget
    zle -N __omnish_fix_widget
    bindkey -M emacs "$__omnish_ask_key" __omnish_ask_widget
    bindkey -M viins "$__omnish_ask_key" __omnish_ask_widget
    bindkey -M emacs "$__omnish_fix_key" __omnish_fix_widget
    bindkey -M viins "$__omnish_fix_key" __omnish_fix_widget
    if [[ -n ${__omnish_pause_key-} ]]; then
        zle -N __omnish_pause_widget
        bindkey -M emacs "$__omnish_pause_key" __omnish_pause_widget
        bindkey -M viins "$__omnish_pause_key" __omnish_pause_widget
    fi
    if [[ -n ${__omnish_pick_key-} ]]; then
        zle -N __omnish_pick_widget
        bindkey -M emacs "$__omnish_pick_key" __omnish_pick_widget
        bindkey -M viins "$__omnish_pick_key" __omnish_pick_widget
    fi
fi
unset __omnish_wrap __omnish_tty __omnish_zsh
