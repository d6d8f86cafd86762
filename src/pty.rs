//! Runs the shell in a pseudo-terminal.
