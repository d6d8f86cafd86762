# omnish nushell hooks. `omnish wrap nu` runs `nu --execute "source <dir>/omnish.nu"`, which
# nushell evaluates after env.nu, config.nu, login.nu and every autoload file (and so after a
# prompt such as starship or oh-my-posh set PROMPT_COMMAND, and after a config that assigns
# `$env.config = {...}` whole). A nu that replaces the recorded one (`exec nu`) or starts from
# one of its commands (a typed `nu`) finds the same hooks in a vendor autoload directory that
# the hooks named for that command only (NU_VENDOR_AUTOLOAD_DIR).
# Markers: see src/record/marker.rs.
#
# The token: never in `$env` (nushell hands every string in `$env` to the programs it runs),
# never in an argument, never in a prompt. It is read from omnish's private file (0600) into a
# variable that only the hook closures capture: no name in the REPL's scope holds it, and
# `view source` of a hook shows the variable's name, not its value. The lines after this file
# (written by omnish) call the function below with omnish's private directory and what this nu
# is: `top` (started by `omnish wrap`), `exec` (it replaced the recorded shell) or `nest` (it
# started from a command of a recorded shell and takes a token of its own).
def --env __omnish_hooks [dir: string, kind: string, far?: record] {
    # A nu started from a command of a recorded shell, with the hooks named for that command
    # only: the next program it starts must not find them.
    hide-env -i NU_VENDOR_AUTOLOAD_DIR
    if not $nu.is-interactive { return }
    let token = if $kind == nest {
        # A token of its own, announced with the session's (the key, read once): omnish then
        # follows this nu as a shell nested in the running command.
        let key = try { open --raw ($dir | path join nu.token) | str trim } catch { "" }
        if ($key | is-empty) { return }
        let t = random binary 16 | encode hex --lower
        let clean = {|s| $s | str replace -a -r '[;\\\x00-\x1f\x7f]' '' }
        let user = try { ^id -un | str trim } catch { $env.USER? | default "" }
        let host = try { sys host | get hostname } catch { "" }
        print -r -n $"\e]633;($key);P;Nest=($t)\a\e]633;($t);P;Shell=nu\a\e]633;($t);P;User=(do $clean $user)\a\e]633;($t);P;Host=(do $clean $host)\a"
        $t
    } else {
        try { open --raw ($dir | path join nu.token) | str trim } catch { "" }
    }
    # An unreadable token (the session is gone): nu runs as it would without omnish.
    if ($token | is-empty) { return }
    # This nu, and a shell that replaces it, each take a token of their own.
    let nested = $kind == nest

    # `\` → `\\`, `;`, control bytes and DEL → \xHH (src/record/marker.rs).
    let escape = {|s: string|
        let s = $s | str replace -a '\' '\\' | str replace -a ';' '\x3b'
        if ($s =~ '[\x00-\x1f\x7f]') {
            $s | split chars | each {|c|
                let n = $c | into binary | into int
                if ($c | str length) == 1 and ($n < 32 or $n == 127) {
                    $"\\x($n | format number | get lowerhex | str substring 2.. | fill -a r -w 2 -c '0')"
                } else { $c }
            } | str join
        } else { $s }
    }

    # Whether `line` is the command of a keybinding that runs a host command (reedline's
    # executehostcommand, as omnish's ask and fix keys do): nushell runs it through the
    # pre_execution hooks as if typed, but it is a key pressed at the prompt, not a command.
    # (A look at the bindings' text first: it is cheap, and most lines are in none.)
    let host_command = {|line: string|
        let bindings = $env.config.keybindings? | default []
        if not ($bindings | to nuon | str contains ($line | to nuon | str trim -c '"')) { return false }
        $bindings | get -o event | flatten | any {|e|
            try { ($e.send =~ "(?i)^executehostcommand$") and $e.cmd == $line } catch { false }
        }
    }

    # pre_execution, kept last so that its output start comes right before the command's.
    let pre_execution = {||
        let line = commandline
        # An empty line: nushell runs nothing (no record); nor is the line the prompt entered
        # to put the hooks back (below) a command of the user's.
        if ($line | str trim | is-empty) or $line == ' __omnish_rehook' or (do $host_command $line) { return }
        mut m = ""
        # nushell keeps a line starting with a space out of its history
        # (history.ignore_space_prefixed, on by default); with `--no-history` it keeps every
        # line out: omnish keeps them out of the record too.
        if ($line =~ '^[ \t]') and ($env.config.history?.ignore_space_prefixed? | default true) {
            $m += $"\e]633;($token);P;HistIgnoreSpace=1\a"
        }
        if not $nu.history-enabled {
            $m += $"\e]633;($token);P;Private=1\a"
        }
        let exec = __omnish_exec_prepare $line $dir $nested
        if $exec.announce {
            $m += $"\e]633;($token);P;Exec=1\a"
        }
        print -r -n $"($m)\e]633;($token);E;(do $escape $line)\a\e]133;($token);C\a"
        if ($exec.why | is-not-empty) { print -r $"omnish: ($exec.name) will not be recorded command by command \(($exec.why)\)" }
        if ($exec.env | is-not-empty) { load-env $exec.env }
    }

    # pre_prompt, kept first so that its end marker comes before what the other hooks print
    # (after it, that is no command's output).
    let pre_prompt = {||
        # An external's exit status; an error of an internal command sets 1 (nushell). An
        # external killed by signal N is -N in nushell: 128+N, as bash and zsh say it.
        let st = $env.LAST_EXIT_CODE? | default 0
        let st = if $st < 0 { 128 - $st } else { $st }
        # What the last line exported to hook a shell it started (a nested one that has
        # ended, an exec that failed): no later command may find the hooks.
        let mine = {|v| ($v | default "" | into string | str starts-with $dir) }
        if (do $mine $env.NU_VENDOR_AUTOLOAD_DIR?) { hide-env NU_VENDOR_AUTOLOAD_DIR }
        if (do $mine $env.ENV?) { hide-env ENV; hide-env -i POSIXLY_CORRECT }
        if (do $mine $env.ZDOTDIR?) { hide-env ZDOTDIR }
        print -r -n $"\e]133;($token);D;($st)\a"
        # After the end marker (so it covers every key echoed before it): no whole line typed
        # ahead waits for the shell, so the command read every line typed while it ran. nushell
        # has no command that looks at the terminal's input without reading it (`input` and
        # `input listen` read); bash's `read -t 0` does (select, nothing read), and the terminal
        # is line by line here, as for bash's own hook. That costs a process: only after a
        # command that ran 200 ms or more (one that reads what is typed runs that long; a few ms
        # beside it); after a shorter one, or without bash, nothing is said.
        let took = try { $env.CMD_DURATION_MS | into int } catch { 0 }
        let waiting = if $took < 200 or (which bash | is-empty) { true } else {
            (do { ^env -u BASH_ENV -u ENV bash -c 'read -t 0' } | complete | get exit_code) == 0
        }
        let w = if $waiting { "" } else { $"\e]633;($token);P;Waiting=0\a" }
        print -r -n $"($w)\e]633;($token);P;Cwd=(do $escape $env.PWD)\a\e]133;($token);A\a"
        # Keep the order (a hook a command added goes after this one and before the other).
        let hooks = $env.config.hooks
        let pp = $hooks.pre_prompt? | default []
        let pe = $hooks.pre_execution? | default []
        if ($pe | last) != $pre_execution {
            $env.config.hooks.pre_execution = ($pe | where {|h| $h != $pre_execution } | append $pre_execution)
        }
        # This closure is known by the comment in its source (a closure cannot name itself).
        let ours = {|h| ($h | describe) == closure and ((view source $h) =~ 'omnish-pre-prompt') }
        if ($pp | is-not-empty) and not (do $ours ($pp | first)) {
            let self = $pp | where {|h| do $ours $h }
            $env.config.hooks.pre_prompt = ($self | append ($pp | where {|h| not (do $ours $h) }))
        }
        # The prompt that puts these hooks back (below), around the user's prompt of the moment
        # (a command may have set another: starship's, a theme's).
        let prompt = $env.PROMPT_COMMAND?
        if $prompt != null and not (($prompt | describe) == closure and ((view source $prompt) =~ 'omnish-prompt')) {
            let wrap = $env.__omnish_wrap_prompt?
            if ($wrap | describe) == closure { $env.PROMPT_COMMAND = (do $wrap $prompt) }
        }
        # omnish-pre-prompt
    }

    $env.config.hooks.pre_prompt = ($env.config.hooks.pre_prompt? | default [] | prepend $pre_prompt)
    $env.config.hooks.pre_execution = ($env.config.hooks.pre_execution? | default [] | append $pre_execution)

    # `$env.config = {hooks: {pre_prompt: [...], ...}}` typed at the prompt replaces the hook
    # lists it names whole, and with them these hooks (a record without `hooks` keeps them:
    # nushell updates the fields it names). The hooks live in `$env.config`, so nothing in it
    # can bring them back; the prompt (PROMPT_COMMAND, evaluated once before each prompt) lives
    # outside it: a closure around the user's prompt. When the pre_prompt hook is gone, it ends
    # the command as that hook would, and enters ` __omnish_rehook` (leading space: out of
    # history) for nushell to run at once (`commandline edit --accept`): a prompt closure
    # cannot change `$env` itself. That command puts the hooks back (it is no record). The
    # closures live in `$env`, which nushell passes to no program (they are no strings).
    $env.__omnish_rehook = {||
        if not ($env.config.hooks.pre_prompt? | default [] | any {|h| $h == $pre_prompt }) {
            $env.config.hooks.pre_prompt = ($env.config.hooks.pre_prompt? | default [] | prepend $pre_prompt)
        }
        if not ($env.config.hooks.pre_execution? | default [] | any {|h| $h == $pre_execution }) {
            $env.config.hooks.pre_execution = ($env.config.hooks.pre_execution? | default [] | append $pre_execution)
        }
    }
    $env.__omnish_wrap_prompt = {|user|
        {||
            # omnish-prompt
            if not ($env.config.hooks.pre_prompt? | default [] | any {|h| $h == $pre_prompt }) {
                do $pre_prompt
                commandline edit --replace --accept ' __omnish_rehook'
            }
            if ($user | describe) == closure { do $user } else { $user }
        }
    }
    if $env.PROMPT_COMMAND? != null {
        $env.PROMPT_COMMAND = (do $env.__omnish_wrap_prompt $env.PROMPT_COMMAND)
    }

    # The ask and fix keys of a nu on the far side of `omnish nest` (`far`: their keybindings),
    # where omnish is not installed: a key prints a request with this shell's token; the
    # recording omnish runs `omnish ask` (or `omnish fix`) on its side, shows the answer below
    # the line, and types Ctrl-] (after the corrected command, for fix), which ends the wait
    # here (src/record/farkey.rs). sh reads the terminal a byte at a time up to it; Ctrl-C gives
    # up. The closure lives in `$env`, which nushell passes to no program (it is no string).
    if $far != null {
        $env.__omnish_far_key = {|action: string|
            if $action == ask { print "" }
            print -n $"\e]633;($token);P;Key=($action)"
            let reader = 'exec </dev/tty; g=$(printf "\035"); s=$(stty -g) || exit 0; stty -icanon -echo min 1 time 0; o=; while c=$(dd bs=1 count=1 2>/dev/null) && [ -n "$c" ]; do [ "$c" = "$g" ] && break; o=$o$c; done; stty "$s"; printf "%s" "$o"'
            let reply = try { ^sh -c $reader } catch { "" }
            if $action == fix and ($reply | is-not-empty) {
                commandline edit --replace $reply
            }
        }
        let modes = [emacs vi_insert vi_normal]
        $env.config.keybindings = ($env.config.keybindings? | default [] | append [
            {
                name: omnish_far_ask
                modifier: $far.ask.modifier
                keycode: $far.ask.keycode
                mode: $modes
                event: {send: executehostcommand, cmd: "do $env.__omnish_far_key ask"}
            }
            {
                name: omnish_far_fix
                modifier: $far.fix.modifier
                keycode: $far.fix.keycode
                mode: $modes
                event: {send: executehostcommand, cmd: "do $env.__omnish_far_key fix"}
            }
        ])
    }
}

# Puts omnish's hooks back after a command replaced the lists that held them (the prompt enters
# this command then: see `__omnish_rehook` above).
def --env __omnish_rehook [] {
    let rehook = $env.__omnish_rehook?
    if ($rehook | describe) == closure { do --env $rehook }
}

# For a line `exec nu [-l|-i|--login|...]`, `exec bash`, `exec zsh` (a shell about to replace
# this one) or a line that is only `nu`, `bash`, `zsh` with -i/-l/--login (a shell that starts
# nested in this one): the environment that hooks it (`env`, loaded for that command only),
# whether to announce an exec, and why it cannot be hooked (`why`).
def __omnish_exec_prepare [line: string, dir: string, nested: bool] {
    mut out = {env: {}, announce: false, why: "", name: ""}
    if not ($line =~ '(nu|bash|zsh|shell|develop)') { return $out }
    let w = $line | str trim | split row -r '\s+'
    let exec = ($w | first) == exec
    let w = if $exec { $w | skip 1 } else { $w }
    if ($w | is-empty) { return $out }
    let cmd = $w | first
    # A program that starts an interactive shell of its own for a project, with only plain words
    # after it: `poetry shell` starts the shell it runs under (it reads its parent process): this
    # nu. `nix develop` and `nix-shell` start bash whatever the user's shell (`bash --rcfile
    # FILE`, which exec.bash honours), unless told to run a command or a build phase.
    let second = $w | get -o 1 | default ""
    let starter = if $exec { null } else if $cmd == poetry and $second == shell { {kind: n, skip: 2} } else if $cmd == nix and $second == develop { {kind: b, skip: 2} } else if $cmd == nix-shell { {kind: b, skip: 1} } else { null }
    let name = if $starter != null { $cmd } else { $cmd | path basename }
    let kind = if $starter != null { $starter.kind } else if $name =~ '^nu$' { "n" } else if $name =~ '^bash[0-9.]*$' { "b" } else if $name =~ '^zsh[0-9.]*$' { "z" } else { "" }
    if ($kind | is-empty) or not ($cmd =~ '^[-_./A-Za-z0-9]+$') { return $out }
    let stop = [-c --command --run --phase --unpack --configure --build --check --install --installcheck --help --version -h]
    # Only options that keep an interactive shell reading its startup files.
    let ok = if $starter != null {
        $w | skip $starter.skip | all {|a| ($a =~ '^[-_./:#@=+,%A-Za-z0-9]+$') and not ($a in $stop) }
    } else {
        $w | skip 1 | all {|a| $a =~ '^(-[il]+|--login|--interactive)$' }
    }
    if not $ok { return $out }
    $out.announce = $exec
    $out.name = $name
    # A nested shell takes a token of its own; so does one that replaces a nested one.
    let own = (not $exec) or $nested
    let files = match $kind {
        n => { path: ($dir | path join (if $own { "nu-nest" } else { "nu-exec" })), var: NU_VENDOR_AUTOLOAD_DIR }
        b => { path: ($dir | path join (if $own { "nest.bash" } else { "exec.bash" })), var: ENV }
        _ => { path: ($dir | path join (if $own { "nest" } else { "" })), var: ZDOTDIR }
    }
    if not ($files.path | path exists) {
        $out.why = "omnish's startup files are gone"
        return $out
    }
    let taken = match $kind { b => ([ENV POSIXLY_CORRECT] | any {|v| $v in $env }), z => ("ZDOTDIR" in $env), _ => false }
    if $taken {
        $out.why = if $kind == b { "ENV or POSIXLY_CORRECT is set" } else { "ZDOTDIR is set" }
        return $out
    }
    $out.env = if $kind == b { {ENV: $files.path, POSIXLY_CORRECT: y} } else { {($files.var): $files.path} }
    $out
}
