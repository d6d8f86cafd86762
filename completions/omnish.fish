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
complete -c omnish -n "__fish_omnish_needs_command" -f -a "sessions" -d 'List, show, remove and prune recorded sessions'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "search" -d 'Search command lines and rendered output of recorded commands'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "status" -d 'Show the current session, the project and the session store'
complete -c omnish -n "__fish_omnish_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c omnish -n "__fish_omnish_using_subcommand wrap" -s h -l help -d 'Print help'
complete -c omnish -n "__fish_omnish_using_subcommand context" -l recent -d 'The N most recent matching commands' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l grep -d 'Only commands whose command line or output matches REGEX' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l cwd -d 'Only commands run in DIR or below it' -r -F
complete -c omnish -n "__fish_omnish_using_subcommand context" -l since -d 'Only commands started within DURATION (90s, 15m, 2h, 1d)' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l session -d 'Session to read: an id (or unique prefix), `current` (the wrapped shell this runs in, else the most recent session) or `all`' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l max-lines -d 'Most output lines per command, head and tail kept (0 = unlimited)' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l max-line-width -d 'Most chars per output line, head and tail kept (0 = unlimited); error lines get twice as many' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l budget -d 'Hard ceiling in tokens for the whole output; older commands are summarized first' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l model -d 'Fit the output to a model\'s profile (budget and tokenizer), e.g. gpt-4o, claude-sonnet-4, llama3.2, qwen2.5-coder:7b' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l tokenizer -d 'Tokenizer for counting the budget: o200k, cl100k or chars4' -r
complete -c omnish -n "__fish_omnish_using_subcommand context" -l format -d 'Output format' -r -f -a "text\t'Plain text, like the terminal showed it'
markdown\t'Markdown with fenced blocks'
json\t'One JSON document (schema v1)'"
complete -c omnish -n "__fish_omnish_using_subcommand context" -l last -d 'Only the most recent matching command (same as --recent 1)'
complete -c omnish -n "__fish_omnish_using_subcommand context" -l failed -d 'Only commands that failed (non-zero exit status)'
complete -c omnish -n "__fish_omnish_using_subcommand context" -l here -d 'Only commands run inside the current git work tree (else the current directory)'
complete -c omnish -n "__fish_omnish_using_subcommand context" -l results-only -d 'Outputs only, without command lines'
complete -c omnish -n "__fish_omnish_using_subcommand context" -l commands-only -d 'Command lines, statuses and directories only, no output'
complete -c omnish -n "__fish_omnish_using_subcommand context" -l no-redact -d 'Show secrets instead of redacting them'
complete -c omnish -n "__fish_omnish_using_subcommand context" -s h -l help -d 'Print help (see more with \'--help\')'
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
complete -c omnish -n "__fish_omnish_using_subcommand search" -s C -l context -d 'Lines of context before and after each matching line' -r
complete -c omnish -n "__fish_omnish_using_subcommand search" -l format -d 'Output format' -r -f -a "text\t'Lines for a person'
json\t'One JSON document'"
complete -c omnish -n "__fish_omnish_using_subcommand search" -l here -d 'Only commands run inside the current git work tree (else the current directory)'
complete -c omnish -n "__fish_omnish_using_subcommand search" -l failed -d 'Only commands that failed (non-zero exit status)'
complete -c omnish -n "__fish_omnish_using_subcommand search" -l commands -d 'Search command lines only, not output'
complete -c omnish -n "__fish_omnish_using_subcommand search" -s i -l ignore-case -d 'Case-insensitive'
complete -c omnish -n "__fish_omnish_using_subcommand search" -s F -l fixed-strings -d 'PATTERN is a plain string, not a regular expression'
complete -c omnish -n "__fish_omnish_using_subcommand search" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c omnish -n "__fish_omnish_using_subcommand status" -l format -d 'Output format' -r -f -a "text\t'Lines for a person'
json\t'One JSON document'"
complete -c omnish -n "__fish_omnish_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context sessions search status help" -f -a "wrap" -d 'Run a shell in a recorded pseudo-terminal'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context sessions search status help" -f -a "context" -d 'Print recent commands and their output as context for a language model'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context sessions search status help" -f -a "sessions" -d 'List, show, remove and prune recorded sessions'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context sessions search status help" -f -a "search" -d 'Search command lines and rendered output of recorded commands'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context sessions search status help" -f -a "status" -d 'Show the current session, the project and the session store'
complete -c omnish -n "__fish_omnish_using_subcommand help; and not __fish_seen_subcommand_from wrap context sessions search status help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c omnish -n "__fish_omnish_using_subcommand help; and __fish_seen_subcommand_from sessions" -f -a "list" -d 'Every session, newest first: id, start, last activity, shell, host, directory, commands, failed commands, size on disk and state'
complete -c omnish -n "__fish_omnish_using_subcommand help; and __fish_seen_subcommand_from sessions" -f -a "show" -d 'A session\'s metadata and its commands, one line each with a one-line summary'
complete -c omnish -n "__fish_omnish_using_subcommand help; and __fish_seen_subcommand_from sessions" -f -a "rm" -d 'Remove sessions (never one whose recorder runs)'
complete -c omnish -n "__fish_omnish_using_subcommand help; and __fish_seen_subcommand_from sessions" -f -a "prune" -d 'Remove old sessions; with no limit given, the configured ones (keep 100, at most 2 GiB)'
