# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_omnish_global_optspecs
    string join \n h/help V/version
end

function __fish_omnish_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_omnish_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_omnish_using_subcommand
    set -l cmd (__fish_omnish_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c omnish -n "__fish_omnish_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c omnish -n "__fish_omnish_needs_command" -s V -l version -d 'Print version'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "wrap" -d 'Run a shell in a recorded pseudo-terminal'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "context" -d 'Print recent commands and their output as context for a language model'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "init" -d 'Print the shell snippet for ~/.bashrc, ~/.zshrc or config.fish: key bindings, optionally a recorded shell'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "ask" -d 'Ask your LLM command about the last failed command (or the last one)'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "fix" -d 'Ask your LLM command for a corrected command for the last failed one and print it'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "config" -d 'Print the effective configuration and where each value came from'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "completions" -d 'Print the shell completion script for bash, zsh or fish'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "man" -d 'Print the man page (roff)'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "mcp" -d 'Serve recent commands to coding agents over the Model Context Protocol (stdio)'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "note" -d 'Pin notes that every context starts with (add, rm, list, clear)'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "sessions" -d 'List, show, remove and prune recorded sessions'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "search" -d 'Search command lines and rendered output of recorded commands'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "pick" -d 'Choose recent commands from a list with a preview of each output (fzf when installed) and print their ids; `context --pick` and `ask --pick` use them'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "status" -d 'Show the current session, the project and the session store'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "nest" -d 'Run a program that starts a shell (sudo -i, su -, ssh, docker exec -it) so that the shell\'s commands are recorded one by one'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "ssh" -d 'ssh, with the remote shell\'s commands recorded one by one (omnish nest -- ssh ...)'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "exec" -d 'Run a program (no shell) and record it as one command with its output: for cron, CI, scripts and agents\' tool calls'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "hooks" -d 'Record every shell command a coding agent runs, through the agent\'s own hooks (install, uninstall, status; run is what the agent runs)'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "pause" -d 'Keep nothing of what this terminal shows from the next command on, for DURATION or until `omnish resume`: commands are kept as private ones (times and status only)'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "resume" -d 'Keep commands again after `omnish pause`'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "forget" -d 'Destroy recorded commands (by id, or those matching a pattern) or a value (a pasted secret) wherever it was recorded'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "export" -d 'Export recorded commands to share them: markdown, one HTML page, an asciinema recording (asciicast v3 or v2) or JSON'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "diff" -d 'Show how two commands\' outputs differ (unified diff); by default the last command against the previous run of the same command line'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c omnish -n "__fish_omnish_using_subcommand wrap" -l paused -d 'Start with recording paused, as after `omnish pause`, until `omnish resume`'
complete -c omnish -n "__fish_omnish_using_subcommand wrap" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand context" -l recent -d 'The N most recent matching commands [default: context.recent, 10; export: all of them]' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l grep -d 'Only commands whose command line or output matches REGEX' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l cwd -d 'Only commands run in DIR or below it' -r -F
complete -c omnish -n "__fish_omnish_using_subcommand context" -l since -d 'Only commands started within DURATION (90s, 15m, 2h, 1d)' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l host -d 'Only commands that ran on HOST (a nested shell\'s host or container, else the session\'s)' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l user -d 'Only commands that ran as USER (a nested shell\'s user, else the session\'s)' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l session -d 'Session to read: an id (or unique prefix), `current` (the wrapped shell this runs in, else the most recent session) or `all`' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l author -d 'Whose commands: `user` (typed at the terminal), `agents` (agents\' hooks and `omnish exec`), an author\'s name (claude-code, an exec --label) or `all`' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l id -d 'Only the command with this id (SESSION:NUMBER, as `omnish pick` prints them; repeatable, or comma-separated). The ids say which sessions are read' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l max-lines -d 'Most output lines per command, head and tail kept (0 = unlimited) [default: context.max_lines, 20]' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l max-line-width -d 'Most chars per output line, head and tail kept (0 = unlimited); error lines get twice as many [default: context.max_line_width, 500]' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l budget -d 'Hard ceiling in tokens for the whole output; older commands are summarized first' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l model -d 'Fit the output to a model\'s profile (budget and tokenizer), e.g. gpt-4o, claude-sonnet-4, llama3.2, qwen2.5-coder:7b, or one added in the config\'s [models] table' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l tokenizer -d 'Tokenizer for counting the budget: o200k, cl100k or chars4' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l format -d 'Output format [default: context.format, text]' -r -f -a "text\t'Plain text, like the terminal showed it'
markdown\t'Markdown with fenced blocks'
json\t'One JSON document (schema v1)'"
complete -c omnish -n "__fish_omnish_using_subcommand context" -l depth -d 'Levels of the file tree to expand (1: the root\'s entries only)' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l last -d 'Only the most recent matching command (same as --recent 1)'
complete -c omnish -n "__fish_omnish_using_subcommand context" -l failed -d 'Only commands that failed (non-zero exit status)'
complete -c omnish -n "__fish_omnish_using_subcommand context" -l here -d 'Only commands run inside the current git work tree (else the current directory)'
complete -c omnish -n "__fish_omnish_using_subcommand context" -l pick -d 'Choose the commands from a list first (`omnish pick`; Esc cancels, exit status 130)'
complete -c omnish -n "__fish_omnish_using_subcommand context" -l results-only -d 'Outputs only, without command lines'
complete -c omnish -n "__fish_omnish_using_subcommand context" -l commands-only -d 'Command lines, statuses and directories only, no output'
complete -c omnish -n "__fish_omnish_using_subcommand context" -l no-redact -d 'Show secrets instead of redacting them'
complete -c omnish -n "__fish_omnish_using_subcommand context" -l no-notes -d 'Leave the pinned notes (`omnish note`) out'
complete -c omnish -n "__fish_omnish_using_subcommand context" -l env -d 'Add an environment snapshot: OS, shell, terminal, cwd, git state, active toolchains and allowed environment variables'
complete -c omnish -n "__fish_omnish_using_subcommand context" -l files -d 'Add the project\'s file tree (git root, else the current directory), without ignored files'
complete -c omnish -n "__fish_omnish_using_subcommand context" -l changed -d 'Add the project\'s files modified since the selected commands started'
complete -c omnish -n "__fish_omnish_using_subcommand context" -l screens -d 'Show the whole last screen of each full-screen program (vim, less, htop), not only its first and last rows (--max-lines is then 200 unless given)'
complete -c omnish -n "__fish_omnish_using_subcommand context" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c omnish -n "__fish_omnish_using_subcommand init" -l ask-key -d 'Key for `omnish ask` [default: keys.ask, \\C-xa]' -r
complete -c omnish -n "__fish_omnish_using_subcommand init" -l fix-key -d 'Key for `omnish fix` [default: keys.fix, \\C-xf]' -r
complete -c omnish -n "__fish_omnish_using_subcommand init" -l wrap -d 'Also start a recorded shell (`omnish wrap`) for interactive terminals'
complete -c omnish -n "__fish_omnish_using_subcommand init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l command -d 'The LLM command to run [default: ask.command]' -r
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l recent -d 'The N most recent matching commands [default: context.recent, 10; export: all of them]' -r
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l grep -d 'Only commands whose command line or output matches REGEX' -r
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l cwd -d 'Only commands run in DIR or below it' -r -F
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l since -d 'Only commands started within DURATION (90s, 15m, 2h, 1d)' -r
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l host -d 'Only commands that ran on HOST (a nested shell\'s host or container, else the session\'s)' -r
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l user -d 'Only commands that ran as USER (a nested shell\'s user, else the session\'s)' -r
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l session -d 'Session to read: an id (or unique prefix), `current` (the wrapped shell this runs in, else the most recent session) or `all`' -r
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l author -d 'Whose commands: `user` (typed at the terminal), `agents` (agents\' hooks and `omnish exec`), an author\'s name (claude-code, an exec --label) or `all`' -r
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l id -d 'Only the command with this id (SESSION:NUMBER, as `omnish pick` prints them; repeatable, or comma-separated). The ids say which sessions are read' -r
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l max-lines -d 'Most output lines per command, head and tail kept (0 = unlimited) [default: context.max_lines, 20]' -r
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l max-line-width -d 'Most chars per output line, head and tail kept (0 = unlimited); error lines get twice as many [default: context.max_line_width, 500]' -r
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l budget -d 'Hard ceiling in tokens for the whole output; older commands are summarized first' -r
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l model -d 'Fit the output to a model\'s profile (budget and tokenizer), e.g. gpt-4o, claude-sonnet-4, llama3.2, qwen2.5-coder:7b, or one added in the config\'s [models] table' -r
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l tokenizer -d 'Tokenizer for counting the budget: o200k, cl100k or chars4' -r
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l format -d 'Output format [default: context.format, text]' -r -f -a "text\t'Plain text, like the terminal showed it'
markdown\t'Markdown with fenced blocks'
json\t'One JSON document (schema v1)'"
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l depth -d 'Levels of the file tree to expand (1: the root\'s entries only)' -r
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l print-prompt -d 'Print the prompt instead of running the LLM command'
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l diff -d 'Add to the prompt how the last command\'s output differs from its previous run\'s (`omnish diff`)'
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l last -d 'Only the most recent matching command (same as --recent 1)'
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l failed -d 'Only commands that failed (non-zero exit status)'
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l here -d 'Only commands run inside the current git work tree (else the current directory)'
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l pick -d 'Choose the commands from a list first (`omnish pick`; Esc cancels, exit status 130)'
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l results-only -d 'Outputs only, without command lines'
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l commands-only -d 'Command lines, statuses and directories only, no output'
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l no-redact -d 'Show secrets instead of redacting them'
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l no-notes -d 'Leave the pinned notes (`omnish note`) out'
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l env -d 'Add an environment snapshot: OS, shell, terminal, cwd, git state, active toolchains and allowed environment variables'
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l files -d 'Add the project\'s file tree (git root, else the current directory), without ignored files'
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l changed -d 'Add the project\'s files modified since the selected commands started'
complete -c omnish -n "__fish_omnish_using_subcommand ask" -l screens -d 'Show the whole last screen of each full-screen program (vim, less, htop), not only its first and last rows (--max-lines is then 200 unless given)'
complete -c omnish -n "__fish_omnish_using_subcommand ask" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l command -d 'The LLM command to run [default: ask.command]' -r
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l recent -d 'The N most recent matching commands [default: context.recent, 10; export: all of them]' -r
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l grep -d 'Only commands whose command line or output matches REGEX' -r
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l cwd -d 'Only commands run in DIR or below it' -r -F
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l since -d 'Only commands started within DURATION (90s, 15m, 2h, 1d)' -r
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l host -d 'Only commands that ran on HOST (a nested shell\'s host or container, else the session\'s)' -r
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l user -d 'Only commands that ran as USER (a nested shell\'s user, else the session\'s)' -r
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l session -d 'Session to read: an id (or unique prefix), `current` (the wrapped shell this runs in, else the most recent session) or `all`' -r
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l author -d 'Whose commands: `user` (typed at the terminal), `agents` (agents\' hooks and `omnish exec`), an author\'s name (claude-code, an exec --label) or `all`' -r
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l id -d 'Only the command with this id (SESSION:NUMBER, as `omnish pick` prints them; repeatable, or comma-separated). The ids say which sessions are read' -r
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l max-lines -d 'Most output lines per command, head and tail kept (0 = unlimited) [default: context.max_lines, 20]' -r
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l max-line-width -d 'Most chars per output line, head and tail kept (0 = unlimited); error lines get twice as many [default: context.max_line_width, 500]' -r
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l budget -d 'Hard ceiling in tokens for the whole output; older commands are summarized first' -r
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l model -d 'Fit the output to a model\'s profile (budget and tokenizer), e.g. gpt-4o, claude-sonnet-4, llama3.2, qwen2.5-coder:7b, or one added in the config\'s [models] table' -r
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l tokenizer -d 'Tokenizer for counting the budget: o200k, cl100k or chars4' -r
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l format -d 'Output format [default: context.format, text]' -r -f -a "text\t'Plain text, like the terminal showed it'
markdown\t'Markdown with fenced blocks'
json\t'One JSON document (schema v1)'"
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l depth -d 'Levels of the file tree to expand (1: the root\'s entries only)' -r
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l last -d 'Only the most recent matching command (same as --recent 1)'
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l failed -d 'Only commands that failed (non-zero exit status)'
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l here -d 'Only commands run inside the current git work tree (else the current directory)'
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l pick -d 'Choose the commands from a list first (`omnish pick`; Esc cancels, exit status 130)'
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l results-only -d 'Outputs only, without command lines'
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l commands-only -d 'Command lines, statuses and directories only, no output'
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l no-redact -d 'Show secrets instead of redacting them'
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l no-notes -d 'Leave the pinned notes (`omnish note`) out'
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l env -d 'Add an environment snapshot: OS, shell, terminal, cwd, git state, active toolchains and allowed environment variables'
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l files -d 'Add the project\'s file tree (git root, else the current directory), without ignored files'
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l changed -d 'Add the project\'s files modified since the selected commands started'
complete -c omnish -n "__fish_omnish_using_subcommand fix" -l screens -d 'Show the whole last screen of each full-screen program (vim, less, htop), not only its first and last rows (--max-lines is then 200 unless given)'
complete -c omnish -n "__fish_omnish_using_subcommand fix" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c omnish -n "__fish_omnish_using_subcommand config" -l format -d 'Output format' -r -f -a "text\t''
json\t''"
complete -c omnish -n "__fish_omnish_using_subcommand config" -l set -d 'Override KEY as a flag would, to see the result (repeatable)' -r
complete -c omnish -n "__fish_omnish_using_subcommand config" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c omnish -n "__fish_omnish_using_subcommand man" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand mcp" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand note; and not __fish_seen_subcommand_from add rm list clear help" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand note; and not __fish_seen_subcommand_from add rm list clear help" -f -a "add" -d 'Pin a note; a note with the same --key is replaced'
complete -c omnish -n "__fish_omnish_using_subcommand note; and not __fish_seen_subcommand_from add rm list clear help" -f -a "rm" -d 'Remove the note with key (or number) K'
complete -c omnish -n "__fish_omnish_using_subcommand note; and not __fish_seen_subcommand_from add rm list clear help" -f -a "list" -d 'List the notes, with keys, priorities, scopes and expiry'
complete -c omnish -n "__fish_omnish_using_subcommand note; and not __fish_seen_subcommand_from add rm list clear help" -f -a "clear" -d 'Remove every note (with --here: this project\'s notes only)'
complete -c omnish -n "__fish_omnish_using_subcommand note; and not __fish_seen_subcommand_from add rm list clear help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c omnish -n "__fish_omnish_using_subcommand note; and __fish_seen_subcommand_from add" -l key -d 'A name to replace or remove it by (default: its number)' -r
complete -c omnish -n "__fish_omnish_using_subcommand note; and __fish_seen_subcommand_from add" -l priority -d 'Higher priorities are printed first and dropped last (default 0)' -r
complete -c omnish -n "__fish_omnish_using_subcommand note; and __fish_seen_subcommand_from add" -l ttl -d 'Forget the note after DURATION (90s, 15m, 2h, 3d)' -r
complete -c omnish -n "__fish_omnish_using_subcommand note; and __fish_seen_subcommand_from add" -l source -d 'Who pinned it (a person, a script, an agent)' -r
complete -c omnish -n "__fish_omnish_using_subcommand note; and __fish_seen_subcommand_from add" -l here -d 'Only for context built in this project (the git root, else the current directory)'
complete -c omnish -n "__fish_omnish_using_subcommand note; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand note; and __fish_seen_subcommand_from rm" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand note; and __fish_seen_subcommand_from list" -l json -d 'One JSON document'
complete -c omnish -n "__fish_omnish_using_subcommand note; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand note; and __fish_seen_subcommand_from clear" -l here
complete -c omnish -n "__fish_omnish_using_subcommand note; and __fish_seen_subcommand_from clear" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand note; and __fish_seen_subcommand_from help" -f -a "add" -d 'Pin a note; a note with the same --key is replaced'
complete -c omnish -n "__fish_omnish_using_subcommand note; and __fish_seen_subcommand_from help" -f -a "rm" -d 'Remove the note with key (or number) K'
complete -c omnish -n "__fish_omnish_using_subcommand note; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the notes, with keys, priorities, scopes and expiry'
complete -c omnish -n "__fish_omnish_using_subcommand note; and __fish_seen_subcommand_from help" -f -a "clear" -d 'Remove every note (with --here: this project\'s notes only)'
complete -c omnish -n "__fish_omnish_using_subcommand note; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and not __fish_seen_subcommand_from list show rm prune help" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and not __fish_seen_subcommand_from list show rm prune help" -f -a "list" -d 'Every session, newest first: id, start, last activity, shell, host, directory, commands, failed commands, size on disk and state'
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and not __fish_seen_subcommand_from list show rm prune help" -f -a "show" -d 'A session\'s metadata and its commands, one line each with a one-line summary'
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and not __fish_seen_subcommand_from list show rm prune help" -f -a "rm" -d 'Remove sessions (never one whose recorder runs)'
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and not __fish_seen_subcommand_from list show rm prune help" -f -a "prune" -d 'Remove old sessions; with no limit given, the configured ones (keep 100, at most 2 GiB)'
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and not __fish_seen_subcommand_from list show rm prune help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and __fish_seen_subcommand_from list" -l format -d 'Output format' -r -f -a "text\t'Lines for a person'
json\t'One JSON document'"
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and __fish_seen_subcommand_from show" -l format -d 'Output format' -r -f -a "text\t'Lines for a person'
json\t'One JSON document'"
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and __fish_seen_subcommand_from show" -l author -d 'Whose commands: `user`, `agents`, an author\'s name or `all`' -r
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and __fish_seen_subcommand_from rm" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and __fish_seen_subcommand_from prune" -l keep -d 'Keep only the N most recent sessions' -r
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and __fish_seen_subcommand_from prune" -l older-than -d 'Remove sessions last active longer ago than DURATION (90m, 12h, 30d, 2w)' -r
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and __fish_seen_subcommand_from prune" -l max-size -d 'Remove the oldest sessions until all take at most SIZE on disk (500M, 2G, 1.5GiB)' -r
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and __fish_seen_subcommand_from prune" -l dry-run -d 'Say what would be removed, remove nothing'
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and __fish_seen_subcommand_from prune" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and __fish_seen_subcommand_from help" -f -a "list" -d 'Every session, newest first: id, start, last activity, shell, host, directory, commands, failed commands, size on disk and state'
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and __fish_seen_subcommand_from help" -f -a "show" -d 'A session\'s metadata and its commands, one line each with a one-line summary'
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and __fish_seen_subcommand_from help" -f -a "rm" -d 'Remove sessions (never one whose recorder runs)'
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and __fish_seen_subcommand_from help" -f -a "prune" -d 'Remove old sessions; with no limit given, the configured ones (keep 100, at most 2 GiB)'
complete -c omnish -n "__fish_omnish_using_subcommand sessions; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c omnish -n "__fish_omnish_using_subcommand search" -l session -d 'Session to search: an id (unique prefix or random suffix), `current` or `all`' -r
complete -c omnish -n "__fish_omnish_using_subcommand search" -l since -d 'Only commands started within DURATION (90s, 15m, 2h, 1d)' -r
complete -c omnish -n "__fish_omnish_using_subcommand search" -l host -d 'Only commands that ran on HOST (a nested shell\'s host or container, else the session\'s)' -r
complete -c omnish -n "__fish_omnish_using_subcommand search" -l user -d 'Only commands that ran as USER (a nested shell\'s user, else the session\'s)' -r
complete -c omnish -n "__fish_omnish_using_subcommand search" -l author -d 'Whose commands: `user` (typed at the terminal), `agents` (agents\' hooks and `omnish exec`), an author\'s name (claude-code, an exec --label) or `all`' -r
complete -c omnish -n "__fish_omnish_using_subcommand search" -s C -l context -d 'Lines of context before and after each matching line' -r
complete -c omnish -n "__fish_omnish_using_subcommand search" -l format -d 'Output format' -r -f -a "text\t'Lines for a person'
json\t'One JSON document'"
complete -c omnish -n "__fish_omnish_using_subcommand search" -l here -d 'Only commands run inside the current git work tree (else the current directory)'
complete -c omnish -n "__fish_omnish_using_subcommand search" -l failed -d 'Only commands that failed (non-zero exit status)'
complete -c omnish -n "__fish_omnish_using_subcommand search" -l commands -d 'Search command lines only, not output'
complete -c omnish -n "__fish_omnish_using_subcommand search" -s i -l ignore-case -d 'Case-insensitive'
complete -c omnish -n "__fish_omnish_using_subcommand search" -s F -l fixed-strings -d 'PATTERN is a plain string, not a regular expression'
complete -c omnish -n "__fish_omnish_using_subcommand search" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c omnish -n "__fish_omnish_using_subcommand pick" -l recent -d 'List the N most recent commands [default: 50]' -r
complete -c omnish -n "__fish_omnish_using_subcommand pick" -l grep -d 'Only commands whose command line or output matches REGEX' -r
complete -c omnish -n "__fish_omnish_using_subcommand pick" -l session -d 'Session to list: an id (or unique prefix), `current` or `all`' -r
complete -c omnish -n "__fish_omnish_using_subcommand pick" -l preview -d 'Print what the preview shows for command ID (fzf runs this)' -r
complete -c omnish -n "__fish_omnish_using_subcommand pick" -l failed -d 'Only commands that failed (non-zero exit status)'
complete -c omnish -n "__fish_omnish_using_subcommand pick" -l plain -d 'The plain numbered list, even when fzf is installed'
complete -c omnish -n "__fish_omnish_using_subcommand pick" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand status" -l format -d 'Output format' -r -f -a "text\t'Lines for a person'
json\t'One JSON document'"
complete -c omnish -n "__fish_omnish_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c omnish -n "__fish_omnish_using_subcommand nest" -l auto -d 'Run by the hooks for a program of `nest.auto`: where the program starts no shell to follow (`sudo apt update`), its record says nothing about it'
complete -c omnish -n "__fish_omnish_using_subcommand nest" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand ssh" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand exec" -l session -d 'Where the record goes: `current` (the recorded terminal this runs in, the default there), `new` (a session of its own, the default elsewhere) or a session id to attach it to' -r
complete -c omnish -n "__fish_omnish_using_subcommand exec" -l label -d 'The author the record is given (`omnish context --author LABEL`) [default: exec]' -r
complete -c omnish -n "__fish_omnish_using_subcommand exec" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status run help" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status run help" -f -a "install" -d 'Add omnish\'s hook to the agent\'s settings (again: nothing changes)'
complete -c omnish -n "__fish_omnish_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status run help" -f -a "uninstall" -d 'Remove omnish\'s hook from the agent\'s settings, and nothing else'
complete -c omnish -n "__fish_omnish_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status run help" -f -a "status" -d 'Say whether omnish\'s hook is installed (exit 1 when not)'
complete -c omnish -n "__fish_omnish_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status run help" -f -a "run" -d 'The hook: reads the agent\'s JSON on stdin and records the command (always exit 0, silent)'
complete -c omnish -n "__fish_omnish_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status run help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c omnish -n "__fish_omnish_using_subcommand hooks; and __fish_seen_subcommand_from install" -l project -d 'The project\'s settings (the git work tree, else this directory), not the user\'s'
complete -c omnish -n "__fish_omnish_using_subcommand hooks; and __fish_seen_subcommand_from install" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c omnish -n "__fish_omnish_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -l project -d 'The project\'s settings, not the user\'s'
complete -c omnish -n "__fish_omnish_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c omnish -n "__fish_omnish_using_subcommand hooks; and __fish_seen_subcommand_from status" -l project -d 'The project\'s settings, not the user\'s'
complete -c omnish -n "__fish_omnish_using_subcommand hooks; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c omnish -n "__fish_omnish_using_subcommand hooks; and __fish_seen_subcommand_from run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c omnish -n "__fish_omnish_using_subcommand hooks; and __fish_seen_subcommand_from help" -f -a "install" -d 'Add omnish\'s hook to the agent\'s settings (again: nothing changes)'
complete -c omnish -n "__fish_omnish_using_subcommand hooks; and __fish_seen_subcommand_from help" -f -a "uninstall" -d 'Remove omnish\'s hook from the agent\'s settings, and nothing else'
complete -c omnish -n "__fish_omnish_using_subcommand hooks; and __fish_seen_subcommand_from help" -f -a "status" -d 'Say whether omnish\'s hook is installed (exit 1 when not)'
complete -c omnish -n "__fish_omnish_using_subcommand hooks; and __fish_seen_subcommand_from help" -f -a "run" -d 'The hook: reads the agent\'s JSON on stdin and records the command (always exit 0, silent)'
complete -c omnish -n "__fish_omnish_using_subcommand hooks; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c omnish -n "__fish_omnish_using_subcommand pause" -l toggle -d 'Resume when paused, else pause (what the pause key of `omnish init` runs)'
complete -c omnish -n "__fish_omnish_using_subcommand pause" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand resume" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand forget" -l grep -d 'Forget every command whose line or rendered output matches REGEX' -r
complete -c omnish -n "__fish_omnish_using_subcommand forget" -l since -d 'With --grep: only commands started within DURATION (90s, 15m, 2h, 1d)' -r
complete -c omnish -n "__fish_omnish_using_subcommand forget" -l session -d 'With --grep: the session to look in: an id, `current` or `all`' -r
complete -c omnish -n "__fish_omnish_using_subcommand forget" -l secret -d 'Overwrite VALUE wherever it was recorded, in every session' -r
complete -c omnish -n "__fish_omnish_using_subcommand forget" -l dry-run -d 'Say what would be forgotten, change nothing'
complete -c omnish -n "__fish_omnish_using_subcommand forget" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand export" -l recent -d 'The N most recent matching commands [default: context.recent, 10; export: all of them]' -r
complete -c omnish -n "__fish_omnish_using_subcommand export" -l grep -d 'Only commands whose command line or output matches REGEX' -r
complete -c omnish -n "__fish_omnish_using_subcommand export" -l cwd -d 'Only commands run in DIR or below it' -r -F
complete -c omnish -n "__fish_omnish_using_subcommand export" -l since -d 'Only commands started within DURATION (90s, 15m, 2h, 1d)' -r
complete -c omnish -n "__fish_omnish_using_subcommand export" -l host -d 'Only commands that ran on HOST (a nested shell\'s host or container, else the session\'s)' -r
complete -c omnish -n "__fish_omnish_using_subcommand export" -l user -d 'Only commands that ran as USER (a nested shell\'s user, else the session\'s)' -r
complete -c omnish -n "__fish_omnish_using_subcommand export" -l session -d 'Session to read: an id (or unique prefix), `current` (the wrapped shell this runs in, else the most recent session) or `all`' -r
complete -c omnish -n "__fish_omnish_using_subcommand export" -l author -d 'Whose commands: `user` (typed at the terminal), `agents` (agents\' hooks and `omnish exec`), an author\'s name (claude-code, an exec --label) or `all`' -r
complete -c omnish -n "__fish_omnish_using_subcommand export" -l id -d 'Only the command with this id (SESSION:NUMBER, as `omnish pick` prints them; repeatable, or comma-separated). The ids say which sessions are read' -r
complete -c omnish -n "__fish_omnish_using_subcommand export" -l format -d 'Output format' -r -f -a "markdown\t'Markdown, each command\'s output folded in `<details>`'
html\t'One self-contained HTML page with the recorded colours'
asciicast\t'asciicast v3, for asciinema\'s player and servers'
asciicast-v2\t'asciicast v2, for older asciinema players'
json\t'One JSON document, as `omnish context --format json`'"
complete -c omnish -n "__fish_omnish_using_subcommand export" -s o -l output -d 'Write to FILE (atomically, mode 0600) instead of standard output' -r -F
complete -c omnish -n "__fish_omnish_using_subcommand export" -l max-lines -d 'Markdown and json: most output lines per command, head and tail kept (0 = all, the default)' -r
complete -c omnish -n "__fish_omnish_using_subcommand export" -l max-line-width -d 'Markdown and json: most chars per output line (0 = unlimited, the default)' -r
complete -c omnish -n "__fish_omnish_using_subcommand export" -l last -d 'Only the most recent matching command (same as --recent 1)'
complete -c omnish -n "__fish_omnish_using_subcommand export" -l failed -d 'Only commands that failed (non-zero exit status)'
complete -c omnish -n "__fish_omnish_using_subcommand export" -l here -d 'Only commands run inside the current git work tree (else the current directory)'
complete -c omnish -n "__fish_omnish_using_subcommand export" -l pick -d 'Choose the commands from a list first (`omnish pick`; Esc cancels, exit status 130)'
complete -c omnish -n "__fish_omnish_using_subcommand export" -l no-redact -d 'Keep secrets instead of redacting them'
complete -c omnish -n "__fish_omnish_using_subcommand export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c omnish -n "__fish_omnish_using_subcommand diff" -l session -d 'Session of ids given as SEQ and of the last command: an id (or unique prefix) or `current` (the wrapped shell this runs in, else the most recent session)' -r
complete -c omnish -n "__fish_omnish_using_subcommand diff" -s U -l unified -d 'Unchanged lines shown around each change' -r
complete -c omnish -n "__fish_omnish_using_subcommand diff" -l ok -d 'Compare with the last successful run of the same command line'
complete -c omnish -n "__fish_omnish_using_subcommand diff" -l normalize -d 'Mask volatile tokens first: times, durations, pids, hex addresses, UUIDs, temp paths'
complete -c omnish -n "__fish_omnish_using_subcommand diff" -l no-redact -d 'Keep secrets instead of redacting them'
complete -c omnish -n "__fish_omnish_using_subcommand diff" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "wrap" -d 'Run a shell in a recorded pseudo-terminal'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "context" -d 'Print recent commands and their output as context for a language model'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "init" -d 'Print the shell snippet for ~/.bashrc, ~/.zshrc or config.fish: key bindings, optionally a recorded shell'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "ask" -d 'Ask your LLM command about the last failed command (or the last one)'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "fix" -d 'Ask your LLM command for a corrected command for the last failed one and print it'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "config" -d 'Print the effective configuration and where each value came from'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "completions" -d 'Print the shell completion script for bash, zsh or fish'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "man" -d 'Print the man page (roff)'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "mcp" -d 'Serve recent commands to coding agents over the Model Context Protocol (stdio)'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "note" -d 'Pin notes that every context starts with (add, rm, list, clear)'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "sessions" -d 'List, show, remove and prune recorded sessions'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "search" -d 'Search command lines and rendered output of recorded commands'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "pick" -d 'Choose recent commands from a list with a preview of each output (fzf when installed) and print their ids; `context --pick` and `ask --pick` use them'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "status" -d 'Show the current session, the project and the session store'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "nest" -d 'Run a program that starts a shell (sudo -i, su -, ssh, docker exec -it) so that the shell\'s commands are recorded one by one'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "ssh" -d 'ssh, with the remote shell\'s commands recorded one by one (omnish nest -- ssh ...)'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "exec" -d 'Run a program (no shell) and record it as one command with its output: for cron, CI, scripts and agents\' tool calls'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "hooks" -d 'Record every shell command a coding agent runs, through the agent\'s own hooks (install, uninstall, status; run is what the agent runs)'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "pause" -d 'Keep nothing of what this terminal shows from the next command on, for DURATION or until `omnish resume`: commands are kept as private ones (times and status only)'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "resume" -d 'Keep commands again after `omnish pause`'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "forget" -d 'Destroy recorded commands (by id, or those matching a pattern) or a value (a pasted secret) wherever it was recorded'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "export" -d 'Export recorded commands to share them: markdown, one HTML page, an asciinema recording (asciicast v3 or v2) or JSON'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "diff" -d 'Show how two commands\' outputs differ (unified diff); by default the last command against the previous run of the same command line'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context init ask fix config completions man mcp note sessions search pick status nest ssh exec hooks pause resume forget export diff help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c omnish -n "__fish_omnish_using_subcommand help; and __fish_seen_subcommand_from note" -f -a "add" -d 'Pin a note; a note with the same --key is replaced'
complete -c omnish -n "__fish_omnish_using_subcommand help; and __fish_seen_subcommand_from note" -f -a "rm" -d 'Remove the note with key (or number) K'
complete -c omnish -n "__fish_omnish_using_subcommand help; and __fish_seen_subcommand_from note" -f -a "list" -d 'List the notes, with keys, priorities, scopes and expiry'
complete -c omnish -n "__fish_omnish_using_subcommand help; and __fish_seen_subcommand_from note" -f -a "clear" -d 'Remove every note (with --here: this project\'s notes only)'
complete -c omnish -n "__fish_omnish_using_subcommand help; and __fish_seen_subcommand_from sessions" -f -a "list" -d 'Every session, newest first: id, start, last activity, shell, host, directory, commands, failed commands, size on disk and state'
complete -c omnish -n "__fish_omnish_using_subcommand help; and __fish_seen_subcommand_from sessions" -f -a "show" -d 'A session\'s metadata and its commands, one line each with a one-line summary'
complete -c omnish -n "__fish_omnish_using_subcommand help; and __fish_seen_subcommand_from sessions" -f -a "rm" -d 'Remove sessions (never one whose recorder runs)'
complete -c omnish -n "__fish_omnish_using_subcommand help; and __fish_seen_subcommand_from sessions" -f -a "prune" -d 'Remove old sessions; with no limit given, the configured ones (keep 100, at most 2 GiB)'
complete -c omnish -n "__fish_omnish_using_subcommand help; and __fish_seen_subcommand_from hooks" -f -a "install" -d 'Add omnish\'s hook to the agent\'s settings (again: nothing changes)'
complete -c omnish -n "__fish_omnish_using_subcommand help; and __fish_seen_subcommand_from hooks" -f -a "uninstall" -d 'Remove omnish\'s hook from the agent\'s settings, and nothing else'
complete -c omnish -n "__fish_omnish_using_subcommand help; and __fish_seen_subcommand_from hooks" -f -a "status" -d 'Say whether omnish\'s hook is installed (exit 1 when not)'
complete -c omnish -n "__fish_omnish_using_subcommand help; and __fish_seen_subcommand_from hooks" -f -a "run" -d 'The hook: reads the agent\'s JSON on stdin and records the command (always exit 0, silent)'
