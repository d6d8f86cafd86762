//! Errors that carry their own exit status.

use std::fmt;

/// An error whose process exit status is not the default 1 (usage errors exit 2).
#[derive(Debug)]
pub struct ExitError {
    pub code: i32,
    pub message: String,
}

impl ExitError {
    pub fn usage(message: impl Into<String>) -> Self {
        ExitError {
            code: 2,
            message: message.into(),
        }
    }
}

impl fmt::Display for ExitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ExitError {}
