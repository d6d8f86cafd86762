//! Finds omnish's own markers in the shell's output.
