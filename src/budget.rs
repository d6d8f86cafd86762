//! Budget stage: per-command truncation, repeat folding, model profiles and the token ceiling.
