module completions {

  # Record your shell; hand its recent commands and output to a language model
  export extern omnish [
    --help(-h)                # Print help (see more with '--help')
    --version(-V)             # Print version
  ]

  # Run a shell in a recorded pseudo-terminal
  export extern "omnish wrap" [
    --paused                  # Start with recording paused, as after `omnish pause`, until `omnish resume`
    --help(-h)                # Print help
    ...shell: string          # The shell to run and its arguments (default: $SHELL, then /bin/sh)
  ]

  def "nu-complete omnish context format" [] {
    [ "text" "markdown" "json" ]
  }

  # Print recent commands and their output as context for a language model
  export extern "omnish context" [
    --recent: string          # The N most recent matching commands [default: context.recent, 10; export: all of them]
    --last                    # Only the most recent matching command (same as --recent 1)
    --failed                  # Only commands that failed (non-zero exit status)
    --grep: string            # Only commands whose command line or output matches REGEX
    --cwd: path               # Only commands run in DIR or below it
    --here                    # Only commands run inside the current git work tree (else the current directory)
    --since: string           # Only commands started within DURATION (90s, 15m, 2h, 1d)
    --host: string            # Only commands that ran on HOST (a nested shell's host or container, else the session's)
    --user: string            # Only commands that ran as USER (a nested shell's user, else the session's)
    --session: string         # Session to read: an id (or unique prefix), `current` (the wrapped shell this runs in, else the most recent session) or `all`
    --author: string          # Whose commands: `user` (typed at the terminal), `agents` (agents' hooks and `omnish exec`), an author's name (claude-code, an exec --label) or `all`
    --id: string              # Only the command with this id (SESSION:NUMBER, as `omnish pick` prints them; repeatable, or comma-separated). The ids say which sessions are read
    --pick                    # Choose the commands from a list first (`omnish pick`; Esc cancels, exit status 130)
    --max-lines: string       # Most output lines per command, head and tail kept (0 = unlimited) [default: context.max_lines, 20]
    --max-line-width: string  # Most chars per output line, head and tail kept (0 = unlimited); error lines get twice as many [default: context.max_line_width, 500]
    --budget: string          # Hard ceiling in tokens for the whole output; older commands are summarized first
    --model: string           # Fit the output to a model's profile (budget and tokenizer), e.g. gpt-4o, claude-sonnet-4, llama3.2, qwen2.5-coder:7b, or one added in the config's [models] table
    --tokenizer: string       # Tokenizer for counting the budget: o200k, cl100k or chars4
    --format: string@"nu-complete omnish context format" # Output format [default: context.format, text]
    --results-only            # Outputs only, without command lines
    --commands-only           # Command lines, statuses and directories only, no output
    --no-redact               # Show secrets instead of redacting them
    --no-notes                # Leave the pinned notes (`omnish note`) out
    --env                     # Add an environment snapshot: OS, shell, terminal, cwd, git state, active toolchains and allowed environment variables
    --files                   # Add the project's file tree (git root, else the current directory), without ignored files
    --depth: string           # Levels of the file tree to expand (1: the root's entries only)
    --changed                 # Add the project's files modified since the selected commands started
    --screens                 # Show the whole last screen of each full-screen program (vim, less, htop), not only its first and last rows (--max-lines is then 200 unless given)
    --help(-h)                # Print help (see more with '--help')
  ]

  def "nu-complete omnish init shell" [] {
    [ "bash" "zsh" "fish" "nu" ]
  }

  # Print the shell snippet for ~/.bashrc, ~/.zshrc or config.fish: key bindings, optionally a recorded shell
  export extern "omnish init" [
    --wrap                    # Also start a recorded shell (`omnish wrap`) for interactive terminals
    --ask-key: string         # Key for `omnish ask` [default: keys.ask, \C-xa]
    --fix-key: string         # Key for `omnish fix` [default: keys.fix, \C-xf]
    --help(-h)                # Print help (see more with '--help')
    shell: string@"nu-complete omnish init shell" # The shell to print the snippet for
  ]

  def "nu-complete omnish ask format" [] {
    [ "text" "markdown" "json" ]
  }

  # Ask your LLM command about the last failed command (or the last one)
  export extern "omnish ask" [
    --command: string         # The LLM command to run [default: ask.command]
    --print-prompt            # Print the prompt instead of running the LLM command
    --diff                    # Add to the prompt how the last command's output differs from its previous run's (`omnish diff`)
    --recent: string          # The N most recent matching commands [default: context.recent, 10; export: all of them]
    --last                    # Only the most recent matching command (same as --recent 1)
    --failed                  # Only commands that failed (non-zero exit status)
    --grep: string            # Only commands whose command line or output matches REGEX
    --cwd: path               # Only commands run in DIR or below it
    --here                    # Only commands run inside the current git work tree (else the current directory)
    --since: string           # Only commands started within DURATION (90s, 15m, 2h, 1d)
    --host: string            # Only commands that ran on HOST (a nested shell's host or container, else the session's)
    --user: string            # Only commands that ran as USER (a nested shell's user, else the session's)
    --session: string         # Session to read: an id (or unique prefix), `current` (the wrapped shell this runs in, else the most recent session) or `all`
    --author: string          # Whose commands: `user` (typed at the terminal), `agents` (agents' hooks and `omnish exec`), an author's name (claude-code, an exec --label) or `all`
    --id: string              # Only the command with this id (SESSION:NUMBER, as `omnish pick` prints them; repeatable, or comma-separated). The ids say which sessions are read
    --pick                    # Choose the commands from a list first (`omnish pick`; Esc cancels, exit status 130)
    --max-lines: string       # Most output lines per command, head and tail kept (0 = unlimited) [default: context.max_lines, 20]
    --max-line-width: string  # Most chars per output line, head and tail kept (0 = unlimited); error lines get twice as many [default: context.max_line_width, 500]
    --budget: string          # Hard ceiling in tokens for the whole output; older commands are summarized first
    --model: string           # Fit the output to a model's profile (budget and tokenizer), e.g. gpt-4o, claude-sonnet-4, llama3.2, qwen2.5-coder:7b, or one added in the config's [models] table
    --tokenizer: string       # Tokenizer for counting the budget: o200k, cl100k or chars4
    --format: string@"nu-complete omnish ask format" # Output format [default: context.format, text]
    --results-only            # Outputs only, without command lines
    --commands-only           # Command lines, statuses and directories only, no output
    --no-redact               # Show secrets instead of redacting them
    --no-notes                # Leave the pinned notes (`omnish note`) out
    --env                     # Add an environment snapshot: OS, shell, terminal, cwd, git state, active toolchains and allowed environment variables
    --files                   # Add the project's file tree (git root, else the current directory), without ignored files
    --depth: string           # Levels of the file tree to expand (1: the root's entries only)
    --changed                 # Add the project's files modified since the selected commands started
    --screens                 # Show the whole last screen of each full-screen program (vim, less, htop), not only its first and last rows (--max-lines is then 200 unless given)
    --help(-h)                # Print help (see more with '--help')
    ...question: string       # The question [default: "Why did this fail and how do I fix it?"]
  ]

  def "nu-complete omnish fix format" [] {
    [ "text" "markdown" "json" ]
  }

  # Ask your LLM command for a corrected command for the last failed one and print it
  export extern "omnish fix" [
    --command: string         # The LLM command to run [default: ask.command]
    --recent: string          # The N most recent matching commands [default: context.recent, 10; export: all of them]
    --last                    # Only the most recent matching command (same as --recent 1)
    --failed                  # Only commands that failed (non-zero exit status)
    --grep: string            # Only commands whose command line or output matches REGEX
    --cwd: path               # Only commands run in DIR or below it
    --here                    # Only commands run inside the current git work tree (else the current directory)
    --since: string           # Only commands started within DURATION (90s, 15m, 2h, 1d)
    --host: string            # Only commands that ran on HOST (a nested shell's host or container, else the session's)
    --user: string            # Only commands that ran as USER (a nested shell's user, else the session's)
    --session: string         # Session to read: an id (or unique prefix), `current` (the wrapped shell this runs in, else the most recent session) or `all`
    --author: string          # Whose commands: `user` (typed at the terminal), `agents` (agents' hooks and `omnish exec`), an author's name (claude-code, an exec --label) or `all`
    --id: string              # Only the command with this id (SESSION:NUMBER, as `omnish pick` prints them; repeatable, or comma-separated). The ids say which sessions are read
    --pick                    # Choose the commands from a list first (`omnish pick`; Esc cancels, exit status 130)
    --max-lines: string       # Most output lines per command, head and tail kept (0 = unlimited) [default: context.max_lines, 20]
    --max-line-width: string  # Most chars per output line, head and tail kept (0 = unlimited); error lines get twice as many [default: context.max_line_width, 500]
    --budget: string          # Hard ceiling in tokens for the whole output; older commands are summarized first
    --model: string           # Fit the output to a model's profile (budget and tokenizer), e.g. gpt-4o, claude-sonnet-4, llama3.2, qwen2.5-coder:7b, or one added in the config's [models] table
    --tokenizer: string       # Tokenizer for counting the budget: o200k, cl100k or chars4
    --format: string@"nu-complete omnish fix format" # Output format [default: context.format, text]
    --results-only            # Outputs only, without command lines
    --commands-only           # Command lines, statuses and directories only, no output
    --no-redact               # Show secrets instead of redacting them
    --no-notes                # Leave the pinned notes (`omnish note`) out
    --env                     # Add an environment snapshot: OS, shell, terminal, cwd, git state, active toolchains and allowed environment variables
    --files                   # Add the project's file tree (git root, else the current directory), without ignored files
    --depth: string           # Levels of the file tree to expand (1: the root's entries only)
    --changed                 # Add the project's files modified since the selected commands started
    --screens                 # Show the whole last screen of each full-screen program (vim, less, htop), not only its first and last rows (--max-lines is then 200 unless given)
    --help(-h)                # Print help (see more with '--help')
  ]

  def "nu-complete omnish config format" [] {
    [ "text" "json" ]
  }

  # Print the effective configuration and where each value came from
  export extern "omnish config" [
    --format: string@"nu-complete omnish config format" # Output format
    --set: string             # Override KEY as a flag would, to see the result (repeatable)
    --help(-h)                # Print help
  ]

  def "nu-complete omnish completions shell" [] {
    [ "bash" "zsh" "fish" "nushell" ]
  }

  # Print the shell completion script for bash, zsh or fish
  export extern "omnish completions" [
    --help(-h)                # Print help (see more with '--help')
    shell: string@"nu-complete omnish completions shell" # The shell
  ]

  # Print the man page (roff)
  export extern "omnish man" [
    --help(-h)                # Print help
  ]

  # Serve recent commands to coding agents over the Model Context Protocol (stdio)
  export extern "omnish mcp" [
    --help(-h)                # Print help
  ]

  # Pin notes that every context starts with (add, rm, list, clear)
  export extern "omnish note" [
    --help(-h)                # Print help
  ]

  # Pin a note; a note with the same --key is replaced
  export extern "omnish note add" [
    --key: string             # A name to replace or remove it by (default: its number)
    --priority: string        # Higher priorities are printed first and dropped last (default 0)
    --ttl: string             # Forget the note after DURATION (90s, 15m, 2h, 3d)
    --here                    # Only for context built in this project (the git root, else the current directory)
    --source: string          # Who pinned it (a person, a script, an agent)
    --help(-h)                # Print help
    text: string              # The note's text
  ]

  # Remove the note with key (or number) K
  export extern "omnish note rm" [
    --help(-h)                # Print help
    key: string
  ]

  # List the notes, with keys, priorities, scopes and expiry
  export extern "omnish note list" [
    --json                    # One JSON document
    --help(-h)                # Print help
  ]

  # Remove every note (with --here: this project's notes only)
  export extern "omnish note clear" [
    --here
    --help(-h)                # Print help
  ]

  # Print this message or the help of the given subcommand(s)
  export extern "omnish note help" [
  ]

  # Pin a note; a note with the same --key is replaced
  export extern "omnish note help add" [
  ]

  # Remove the note with key (or number) K
  export extern "omnish note help rm" [
  ]

  # List the notes, with keys, priorities, scopes and expiry
  export extern "omnish note help list" [
  ]

  # Remove every note (with --here: this project's notes only)
  export extern "omnish note help clear" [
  ]

  # Print this message or the help of the given subcommand(s)
  export extern "omnish note help help" [
  ]

  # List, show, remove and prune recorded sessions
  export extern "omnish sessions" [
    --help(-h)                # Print help
  ]

  def "nu-complete omnish sessions list format" [] {
    [ "text" "json" ]
  }

  # Every session, newest first: id, start, last activity, shell, host, directory, commands, failed commands, size on disk and state
  export extern "omnish sessions list" [
    --format: string@"nu-complete omnish sessions list format" # Output format
    --help(-h)                # Print help (see more with '--help')
  ]

  def "nu-complete omnish sessions show format" [] {
    [ "text" "json" ]
  }

  # A session's metadata and its commands, one line each with a one-line summary
  export extern "omnish sessions show" [
    --format: string@"nu-complete omnish sessions show format" # Output format
    --author: string          # Whose commands: `user`, `agents`, an author's name or `all`
    --help(-h)                # Print help (see more with '--help')
    id?: string               # Session id, unique prefix or random suffix (default: the current session, else the most recent one)
  ]

  # Remove sessions (never one whose recorder runs)
  export extern "omnish sessions rm" [
    --help(-h)                # Print help
    ...ids: string            # Session ids, unique prefixes or random suffixes
  ]

  # Remove old sessions; with no limit given, the configured ones (keep 100, at most 2 GiB)
  export extern "omnish sessions prune" [
    --keep: string            # Keep only the N most recent sessions
    --older-than: string      # Remove sessions last active longer ago than DURATION (90m, 12h, 30d, 2w)
    --max-size: string        # Remove the oldest sessions until all take at most SIZE on disk (500M, 2G, 1.5GiB)
    --dry-run                 # Say what would be removed, remove nothing
    --help(-h)                # Print help
  ]

  # Print this message or the help of the given subcommand(s)
  export extern "omnish sessions help" [
  ]

  # Every session, newest first: id, start, last activity, shell, host, directory, commands, failed commands, size on disk and state
  export extern "omnish sessions help list" [
  ]

  # A session's metadata and its commands, one line each with a one-line summary
  export extern "omnish sessions help show" [
  ]

  # Remove sessions (never one whose recorder runs)
  export extern "omnish sessions help rm" [
  ]

  # Remove old sessions; with no limit given, the configured ones (keep 100, at most 2 GiB)
  export extern "omnish sessions help prune" [
  ]

  # Print this message or the help of the given subcommand(s)
  export extern "omnish sessions help help" [
  ]

  def "nu-complete omnish search format" [] {
    [ "text" "json" ]
  }

  # Search command lines and rendered output of recorded commands
  export extern "omnish search" [
    --session: string         # Session to search: an id (unique prefix or random suffix), `current` or `all`
    --here                    # Only commands run inside the current git work tree (else the current directory)
    --since: string           # Only commands started within DURATION (90s, 15m, 2h, 1d)
    --failed                  # Only commands that failed (non-zero exit status)
    --host: string            # Only commands that ran on HOST (a nested shell's host or container, else the session's)
    --user: string            # Only commands that ran as USER (a nested shell's user, else the session's)
    --author: string          # Whose commands: `user` (typed at the terminal), `agents` (agents' hooks and `omnish exec`), an author's name (claude-code, an exec --label) or `all`
    --commands                # Search command lines only, not output
    --ignore-case(-i)         # Case-insensitive
    --fixed-strings(-F)       # PATTERN is a plain string, not a regular expression
    --context(-C): string     # Lines of context before and after each matching line
    --format: string@"nu-complete omnish search format" # Output format
    --help(-h)                # Print help (see more with '--help')
    pattern: string           # Regular expression (Rust regex syntax), matched line by line
  ]

  # Choose recent commands from a list with a preview of each output (fzf when installed) and print their ids; `context --pick` and `ask --pick` use them
  export extern "omnish pick" [
    --recent: string          # List the N most recent commands [default: 50]
    --failed                  # Only commands that failed (non-zero exit status)
    --grep: string            # Only commands whose command line or output matches REGEX
    --session: string         # Session to list: an id (or unique prefix), `current` or `all`
    --plain                   # The plain numbered list, even when fzf is installed
    --preview: string         # Print what the preview shows for command ID (fzf runs this)
    --help(-h)                # Print help
  ]

  def "nu-complete omnish status format" [] {
    [ "text" "json" ]
  }

  # Show the current session, the project and the session store
  export extern "omnish status" [
    --format: string@"nu-complete omnish status format" # Output format
    --help(-h)                # Print help (see more with '--help')
  ]

  # Run a program that starts a shell (sudo -i, su -, ssh, docker exec -it) so that the shell's commands are recorded one by one
  export extern "omnish nest" [
    --auto                    # Run by the hooks for a program of `nest.auto`: where the program starts no shell to follow (`sudo apt update`), its record says nothing about it
    --help(-h)                # Print help
    ...program: string        # The program and its arguments
  ]

  # ssh, with the remote shell's commands recorded one by one (omnish nest -- ssh ...)
  export extern "omnish ssh" [
    --help(-h)                # Print help
    ...args: string           # ssh's arguments
  ]

  # Run a program (no shell) and record it as one command with its output: for cron, CI, scripts and agents' tool calls
  export extern "omnish exec" [
    --session: string         # Where the record goes: `current` (the recorded terminal this runs in, the default there), `new` (a session of its own, the default elsewhere) or a session id to attach it to
    --label: string           # The author the record is given (`omnish context --author LABEL`) [default: exec]
    --help(-h)                # Print help
    ...program: string        # The program and its arguments
  ]

  # Record every shell command a coding agent runs, through the agent's own hooks (install, uninstall, status; run is what the agent runs)
  export extern "omnish hooks" [
    --help(-h)                # Print help
  ]

  def "nu-complete omnish hooks install agent" [] {
    [ "claude-code" "gemini" "codex" "opencode" ]
  }

  # Add omnish's hook to the agent's settings (again: nothing changes)
  export extern "omnish hooks install" [
    --project                 # The project's settings (the git work tree, else this directory), not the user's
    --help(-h)                # Print help (see more with '--help')
    agent: string@"nu-complete omnish hooks install agent"
  ]

  def "nu-complete omnish hooks uninstall agent" [] {
    [ "claude-code" "gemini" "codex" "opencode" ]
  }

  # Remove omnish's hook from the agent's settings, and nothing else
  export extern "omnish hooks uninstall" [
    --project                 # The project's settings, not the user's
    --help(-h)                # Print help (see more with '--help')
    agent: string@"nu-complete omnish hooks uninstall agent"
  ]

  def "nu-complete omnish hooks status agent" [] {
    [ "claude-code" "gemini" "codex" "opencode" ]
  }

  # Say whether omnish's hook is installed (exit 1 when not)
  export extern "omnish hooks status" [
    --project                 # The project's settings, not the user's
    --help(-h)                # Print help (see more with '--help')
    agent: string@"nu-complete omnish hooks status agent"
  ]

  def "nu-complete omnish hooks run agent" [] {
    [ "claude-code" "gemini" "codex" "opencode" ]
  }

  # The hook: reads the agent's JSON on stdin and records the command (always exit 0, silent)
  export extern "omnish hooks run" [
    --help(-h)                # Print help (see more with '--help')
    agent: string@"nu-complete omnish hooks run agent"
  ]

  # Print this message or the help of the given subcommand(s)
  export extern "omnish hooks help" [
  ]

  # Add omnish's hook to the agent's settings (again: nothing changes)
  export extern "omnish hooks help install" [
  ]

  # Remove omnish's hook from the agent's settings, and nothing else
  export extern "omnish hooks help uninstall" [
  ]

  # Say whether omnish's hook is installed (exit 1 when not)
  export extern "omnish hooks help status" [
  ]

  # The hook: reads the agent's JSON on stdin and records the command (always exit 0, silent)
  export extern "omnish hooks help run" [
  ]

  # Print this message or the help of the given subcommand(s)
  export extern "omnish hooks help help" [
  ]

  # Keep nothing of what this terminal shows from the next command on, for DURATION or until `omnish resume`: commands are kept as private ones (times and status only)
  export extern "omnish pause" [
    --toggle                  # Resume when paused, else pause (what the pause key of `omnish init` runs)
    --help(-h)                # Print help
    duration?: string         # How long (90s, 15m, 2h); without it, until `omnish resume`
  ]

  # Keep commands again after `omnish pause`
  export extern "omnish resume" [
    --help(-h)                # Print help
  ]

  # Destroy recorded commands (by id, or those matching a pattern) or a value (a pasted secret) wherever it was recorded
  export extern "omnish forget" [
    --grep: string            # Forget every command whose line or rendered output matches REGEX
    --since: string           # With --grep: only commands started within DURATION (90s, 15m, 2h, 1d)
    --session: string         # With --grep: the session to look in: an id, `current` or `all`
    --secret: string          # Overwrite VALUE wherever it was recorded, in every session
    --dry-run                 # Say what would be forgotten, change nothing
    --help(-h)                # Print help
    ...ids: string            # Command ids (`SESSION:SEQ`, the session a unique prefix of its id; or `SEQ` alone in the current session)
  ]

  def "nu-complete omnish export format" [] {
    [ "markdown" "html" "asciicast" "asciicast-v2" "json" ]
  }

  # Export recorded commands to share them: markdown, one HTML page, an asciinema recording (asciicast v3 or v2) or JSON
  export extern "omnish export" [
    --recent: string          # The N most recent matching commands [default: context.recent, 10; export: all of them]
    --last                    # Only the most recent matching command (same as --recent 1)
    --failed                  # Only commands that failed (non-zero exit status)
    --grep: string            # Only commands whose command line or output matches REGEX
    --cwd: path               # Only commands run in DIR or below it
    --here                    # Only commands run inside the current git work tree (else the current directory)
    --since: string           # Only commands started within DURATION (90s, 15m, 2h, 1d)
    --host: string            # Only commands that ran on HOST (a nested shell's host or container, else the session's)
    --user: string            # Only commands that ran as USER (a nested shell's user, else the session's)
    --session: string         # Session to read: an id (or unique prefix), `current` (the wrapped shell this runs in, else the most recent session) or `all`
    --author: string          # Whose commands: `user` (typed at the terminal), `agents` (agents' hooks and `omnish exec`), an author's name (claude-code, an exec --label) or `all`
    --id: string              # Only the command with this id (SESSION:NUMBER, as `omnish pick` prints them; repeatable, or comma-separated). The ids say which sessions are read
    --pick                    # Choose the commands from a list first (`omnish pick`; Esc cancels, exit status 130)
    --format: string@"nu-complete omnish export format" # Output format
    --output(-o): path        # Write to FILE (atomically, mode 0600) instead of standard output
    --max-lines: string       # Markdown and json: most output lines per command, head and tail kept (0 = all, the default)
    --max-line-width: string  # Markdown and json: most chars per output line (0 = unlimited, the default)
    --no-redact               # Keep secrets instead of redacting them
    --help(-h)                # Print help (see more with '--help')
  ]

  # Show how two commands' outputs differ (unified diff); by default the last command against the previous run of the same command line
  export extern "omnish diff" [
    --ok                      # Compare with the last successful run of the same command line
    --normalize               # Mask volatile tokens first: times, durations, pids, hex addresses, UUIDs, temp paths
    --session: string         # Session of ids given as SEQ and of the last command: an id (or unique prefix) or `current` (the wrapped shell this runs in, else the most recent session)
    --unified(-U): string     # Unchanged lines shown around each change
    --no-redact               # Keep secrets instead of redacting them
    --help(-h)                # Print help
    ...ids: string            # `OLD NEW`, or `NEW` alone (compared with the previous run of its command line)
  ]

  # Print this message or the help of the given subcommand(s)
  export extern "omnish help" [
  ]

  # Run a shell in a recorded pseudo-terminal
  export extern "omnish help wrap" [
  ]

  # Print recent commands and their output as context for a language model
  export extern "omnish help context" [
  ]

  # Print the shell snippet for ~/.bashrc, ~/.zshrc or config.fish: key bindings, optionally a recorded shell
  export extern "omnish help init" [
  ]

  # Ask your LLM command about the last failed command (or the last one)
  export extern "omnish help ask" [
  ]

  # Ask your LLM command for a corrected command for the last failed one and print it
  export extern "omnish help fix" [
  ]

  # Print the effective configuration and where each value came from
  export extern "omnish help config" [
  ]

  # Print the shell completion script for bash, zsh or fish
  export extern "omnish help completions" [
  ]

  # Print the man page (roff)
  export extern "omnish help man" [
  ]

  # Serve recent commands to coding agents over the Model Context Protocol (stdio)
  export extern "omnish help mcp" [
  ]

  # Pin notes that every context starts with (add, rm, list, clear)
  export extern "omnish help note" [
  ]

  # Pin a note; a note with the same --key is replaced
  export extern "omnish help note add" [
  ]

  # Remove the note with key (or number) K
  export extern "omnish help note rm" [
  ]

  # List the notes, with keys, priorities, scopes and expiry
  export extern "omnish help note list" [
  ]

  # Remove every note (with --here: this project's notes only)
  export extern "omnish help note clear" [
  ]

  # List, show, remove and prune recorded sessions
  export extern "omnish help sessions" [
  ]

  # Every session, newest first: id, start, last activity, shell, host, directory, commands, failed commands, size on disk and state
  export extern "omnish help sessions list" [
  ]

  # A session's metadata and its commands, one line each with a one-line summary
  export extern "omnish help sessions show" [
  ]

  # Remove sessions (never one whose recorder runs)
  export extern "omnish help sessions rm" [
  ]

  # Remove old sessions; with no limit given, the configured ones (keep 100, at most 2 GiB)
  export extern "omnish help sessions prune" [
  ]

  # Search command lines and rendered output of recorded commands
  export extern "omnish help search" [
  ]

  # Choose recent commands from a list with a preview of each output (fzf when installed) and print their ids; `context --pick` and `ask --pick` use them
  export extern "omnish help pick" [
  ]

  # Show the current session, the project and the session store
  export extern "omnish help status" [
  ]

  # Run a program that starts a shell (sudo -i, su -, ssh, docker exec -it) so that the shell's commands are recorded one by one
  export extern "omnish help nest" [
  ]

  # ssh, with the remote shell's commands recorded one by one (omnish nest -- ssh ...)
  export extern "omnish help ssh" [
  ]

  # Run a program (no shell) and record it as one command with its output: for cron, CI, scripts and agents' tool calls
  export extern "omnish help exec" [
  ]

  # Record every shell command a coding agent runs, through the agent's own hooks (install, uninstall, status; run is what the agent runs)
  export extern "omnish help hooks" [
  ]

  # Add omnish's hook to the agent's settings (again: nothing changes)
  export extern "omnish help hooks install" [
  ]

  # Remove omnish's hook from the agent's settings, and nothing else
  export extern "omnish help hooks uninstall" [
  ]

  # Say whether omnish's hook is installed (exit 1 when not)
  export extern "omnish help hooks status" [
  ]

  # The hook: reads the agent's JSON on stdin and records the command (always exit 0, silent)
  export extern "omnish help hooks run" [
  ]

  # Keep nothing of what this terminal shows from the next command on, for DURATION or until `omnish resume`: commands are kept as private ones (times and status only)
  export extern "omnish help pause" [
  ]

  # Keep commands again after `omnish pause`
  export extern "omnish help resume" [
  ]

  # Destroy recorded commands (by id, or those matching a pattern) or a value (a pasted secret) wherever it was recorded
  export extern "omnish help forget" [
  ]

  # Export recorded commands to share them: markdown, one HTML page, an asciinema recording (asciicast v3 or v2) or JSON
  export extern "omnish help export" [
  ]

  # Show how two commands' outputs differ (unified diff); by default the last command against the previous run of the same command line
  export extern "omnish help diff" [
  ]

  # Print this message or the help of the given subcommand(s)
  export extern "omnish help help" [
  ]

}

export use completions *
