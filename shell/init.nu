# omnish key bindings (and, with --wrap, a recorded shell), printed by `omnish init nu` into a
# vendor autoload file that nushell reads after config.nu (the first lines of the output say
# what config.nu holds). config.nu writes it again at every start, so that the decisions are
# this start's. The last line of the file (printed by omnish) calls __omnish_init with:
#   bin   omnish's absolute path
#   ask   the keybinding for `omnish ask` ({modifier, keycode}, from keys.ask)
#   fix   the keybinding for `omnish fix`
#   pause the keybinding for `omnish pause --toggle`, or null for none
#   pick  the keybinding for `omnish ask --pick`, or null for none
#   wrap  true to replace this shell with a recorded one: omnish found this terminal can be
#         recorded, is not recorded yet and was not wrapped from here before
#   tty   this terminal, remembered so the recorded shell is started once
# Nothing happens in shells that are not interactive (scripts, `nu -c`, which read no config).

# The answer streams below the line being edited; nushell then draws the prompt and the line
# again (reedline keeps its buffer across a host command).
def __omnish_ask_key [bin: string] {
    print ""
    try { null | ^$bin ask } catch { }
}

# The corrected command replaces the line, to edit and run (nothing runs here). omnish runs in
# the foreground, so that Ctrl-C reaches it and not the line editor.
def __omnish_fix_key [bin: string] {
    print ""
    let cmd = try { null | ^$bin fix | str trim -r -c "\n" } catch { "" }
    if ($cmd | is-not-empty) {
        commandline edit --replace $cmd
    }
}

# Pauses recording, or resumes it (the recorder takes the word from the terminal; the line
# being edited runs paused, or not, when it runs). What omnish says goes below the line.
def __omnish_pause_key [bin: string] {
    print ""
    try { null | ^$bin pause --toggle } catch { }
}

# Lists recent commands to pick (fzf, else a numbered list; both read the terminal themselves)
# and asks about those picked; Esc picks nothing and asks nothing.
def __omnish_pick_key [bin: string] {
    print ""
    try { null | ^$bin ask --pick } catch { }
}

def --env __omnish_init [init: record] {
    if not $nu.is-interactive { return }
    if $init.wrap and (is-terminal --stdin) and (is-terminal --stdout) {
        if ($init.bin | path exists) {
            # At the first prompt, not now: while nushell reads its startup files the terminal
            # may still belong to the last program they ran (this file's `omnish init`), and
            # omnish must start in the terminal's foreground to read the keys.
            $env.config.hooks.pre_prompt = ($env.config.hooks.pre_prompt? | default [] | prepend {||
                $env.OMNISH_INIT_WRAPPED = $init.tty
                # This nu's own binary.
                if $nu.is-login {
                    exec $init.bin wrap $nu.current-exe -l
                } else {
                    exec $init.bin wrap $nu.current-exe
                }
            })
        } else {
            print -e $"omnish: cannot run ($init.bin); this shell is not recorded"
        }
    }
    # The command a key runs names omnish (a raw string: any path), as the host command
    # nushell runs (and shows to its pre_execution hooks).
    let bin = $"r###'($init.bin)'###"
    let modes = [emacs vi_insert vi_normal]
    $env.config.keybindings = ($env.config.keybindings? | default [] | append [
        {
            name: omnish_ask
            modifier: $init.ask.modifier
            keycode: $init.ask.keycode
            mode: $modes
            event: {send: executehostcommand, cmd: $"__omnish_ask_key ($bin)"}
        }
        {
            name: omnish_fix
            modifier: $init.fix.modifier
            keycode: $init.fix.keycode
            mode: $modes
            event: {send: executehostcommand, cmd: $"__omnish_fix_key ($bin)"}
        }
    ])
    if $init.pause != null {
        $env.config.keybindings = ($env.config.keybindings | append {
            name: omnish_pause
            modifier: $init.pause.modifier
            keycode: $init.pause.keycode
            mode: $modes
            event: {send: executehostcommand, cmd: $"__omnish_pause_key ($bin)"}
        })
    }
    if $init.pick? != null {
        $env.config.keybindings = ($env.config.keybindings | append {
            name: omnish_pick
            modifier: $init.pick.modifier
            keycode: $init.pick.keycode
            mode: $modes
            event: {send: executehostcommand, cmd: $"__omnish_pick_key ($bin)"}
        })
    }
}
