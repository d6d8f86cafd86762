# omnish key bindings (and, with --wrap, a recorded shell), printed by `omnish init fish` for
# `omnish init fish | source` at the end of ~/.config/fish/config.fish. The lines above this file
# (printed by omnish) set:
#   __omnish_bin       omnish's absolute path
#   __omnish_ask_key   the key for `omnish ask` (keys.ask, turned into the bytes `bind` takes)
#   __omnish_fix_key   the key for `omnish fix`
#   __omnish_pause_key the key for `omnish pause --toggle` (empty: none)
#   __omnish_pick_key  the key for `omnish ask --pick` (empty: none)
#   __omnish_wrap      1 to replace this shell with a recorded one: omnish found this terminal
#                      can be recorded, is not recorded yet and was not wrapped from here before
#   __omnish_tty       this terminal, remembered so the recorded shell is started once
# Nothing happens in shells that are not interactive (scripts, `fish -c`).

if status is-interactive
    # (stdin is the pipe from `omnish init`, which checked that its own is a terminal.)
    if test "$__omnish_wrap" = 1; and test -t 1
        if test -x "$__omnish_bin"
            set -gx OMNISH_INIT_WRAPPED "$__omnish_tty"
            # This fish's own binary, else the first on PATH. Its stdin is the pipe from
            # `omnish init`: the recorded shell takes the terminal from stderr.
            set -l __omnish_fish (status fish-path 2>/dev/null)
            test -x "$__omnish_fish"; or set __omnish_fish fish
            if status is-login
                exec $__omnish_bin wrap $__omnish_fish -l 0<&2
            else
                exec $__omnish_bin wrap $__omnish_fish 0<&2
            end
        end
        printf 'omnish: cannot run %s; this shell is not recorded\n' "$__omnish_bin" >&2
    end

    # The answer streams below the line (the prompt and the line being edited stay above it),
    # then fish draws the prompt and the line again.
    function __omnish_ask_widget
        echo
        $__omnish_bin ask </dev/null
        commandline -f repaint
    end

    # The corrected command replaces the line, to edit and run (nothing runs here). omnish runs
    # as a command of its own, not inside (...), so that Ctrl-C reaches it; its answer goes
    # through a private file.
    function __omnish_fix_widget
        set -l out (command mktemp (set -q TMPDIR; and echo $TMPDIR; or echo /tmp)/omnish-fix.XXXXXX)
        or return 0
        set -l cmd
        if $__omnish_bin fix </dev/null >$out
            set cmd (string collect <$out)
        end
        command rm -f -- $out
        if test -n "$cmd"
            commandline -r -- $cmd
            commandline -C (string length -- $cmd)
        end
        commandline -f repaint
    end

    # Pauses recording, or resumes it (the recorder takes the word from the terminal; the line
    # being edited runs paused, or not, when it runs). What omnish says goes below the line.
    function __omnish_pause_widget
        echo
        $__omnish_bin pause --toggle </dev/null
        commandline -f repaint
    end

    # Lists recent commands to pick (fzf, else a numbered list) and asks about those picked;
    # Esc picks nothing and asks nothing.
    function __omnish_pick_widget
        echo
        $__omnish_bin ask --pick </dev/null
        commandline -f repaint
    end

    # Emacs keys (fish's default mode) and vi's insert mode.
    for __omnish_m in default insert
        bind -M $__omnish_m $__omnish_ask_key __omnish_ask_widget
        bind -M $__omnish_m $__omnish_fix_key __omnish_fix_widget
        if test -n "$__omnish_pause_key"
            bind -M $__omnish_m $__omnish_pause_key __omnish_pause_widget
        end
        if test -n "$__omnish_pick_key"
            bind -M $__omnish_m $__omnish_pick_key __omnish_pick_widget
        end
    end
    set -e __omnish_m
end
set -e __omnish_wrap __omnish_tty
