//! Errors typed by what the caller does about them, and the exit status of each, mapped in one
//! place ([`exit_status`], which `main` calls).
//!
//! The library ([`crate::context`], [`crate::mcp`]'s tools) says what went wrong in words that
//! name no flag: a usage error carries the [`Field`] it is about, and each front end names that
//! field its own way (`--since` on the command line, the argument `since` in MCP, the key
//! `context.recent` in the configuration).

use std::fmt;

/// What a usage error is about: an option of a request, named by each front end in its own
/// words (see [`Field::flag`] for the command line's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// How many commands (`--recent`, MCP `count`).
    Recent,
    /// A regular expression over command lines and output (`--grep`, MCP `grep`, `pattern`).
    Grep,
    /// A directory commands ran in (`--cwd`, MCP `cwd`).
    Cwd,
    /// A duration back from now (`--since`, MCP `since`).
    Since,
    /// Which session (`--session`, MCP `session`).
    Session,
    /// Output lines per command (`--max-lines`).
    MaxLines,
    /// Chars per output line (`--max-line-width`).
    MaxLineWidth,
    /// A token ceiling (`--budget`).
    Budget,
    /// A model profile (`--model`, or `ask.model` in the configuration).
    Model,
    /// The tokenizer a budget is counted with (`--tokenizer`).
    Tokenizer,
    /// Levels of the file tree (`--depth`).
    Depth,
    /// Any other duration (`--older-than`, `--ttl`).
    Duration,
    /// The host commands ran on (`--host`, MCP `host`).
    Host,
    /// The user commands ran as (`--user`, MCP `user`).
    User,
    /// Commands by their ids (`--id`, as `omnish pick` prints them).
    Id,
    /// Who ran the commands (`--author`, MCP `author`).
    Author,
}

impl Field {
    /// The command-line flag for this field.
    pub fn flag(self) -> &'static str {
        match self {
            Field::Recent => "--recent",
            Field::Grep => "--grep",
            Field::Cwd => "--cwd",
            Field::Since => "--since",
            Field::Session => "--session",
            Field::MaxLines => "--max-lines",
            Field::MaxLineWidth => "--max-line-width",
            Field::Budget => "--budget",
            Field::Model => "--model",
            Field::Tokenizer => "--tokenizer",
            Field::Depth => "--depth",
            Field::Duration => "duration",
            Field::Host => "--host",
            Field::User => "--user",
            Field::Id => "--id",
            Field::Author => "--author",
        }
    }
}

/// A request that cannot be served as asked: a value out of range, a pattern that does not
/// compile, a budget below the smallest document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage {
    /// What it is about, when one option is to blame.
    pub field: Option<Field>,
    /// The value came from the configuration, not from the request itself (a front end names
    /// the key rather than its own option).
    pub from_settings: bool,
    /// One line, naming no flag.
    pub message: String,
}

/// An error of the library or of a front end.
#[derive(Debug)]
pub enum Error {
    /// The request cannot be served as asked (exit status 2).
    Usage(Usage),
    /// What the request names does not exist: no session matches, nothing is recorded yet
    /// (exit status 1).
    NotFound(String),
    /// Reading the store or writing the result failed (exit status 1; a closed pipe, whose
    /// reader got what it wanted, is success).
    Io(anyhow::Error),
    /// A front end's own exit status (127: the shell to wrap cannot be found).
    Status { code: i32, message: String },
}

impl Error {
    /// A usage error about no one option.
    pub fn usage(message: impl Into<String>) -> Error {
        Error::Usage(Usage {
            field: None,
            from_settings: false,
            message: message.into(),
        })
    }

    /// A usage error about `field`.
    pub fn bad(field: Field, message: impl Into<String>) -> Error {
        Error::Usage(Usage {
            field: Some(field),
            from_settings: false,
            message: message.into(),
        })
    }

    /// The exit status this error ends a command with.
    pub fn code(&self) -> i32 {
        match self {
            Error::Usage(_) => 2,
            Error::NotFound(_) | Error::Io(_) => 1,
            Error::Status { code, .. } => *code,
        }
    }

    /// The usage error, if this is one.
    pub fn as_usage(&self) -> Option<&Usage> {
        match self {
            Error::Usage(u) => Some(u),
            _ => None,
        }
    }

    /// The usage error with its field named by `name` (`--since: invalid duration ...`); any
    /// other error as it is.
    pub fn named(self, name: impl Fn(&Usage) -> Option<String>) -> Error {
        match self {
            Error::Usage(u) => match name(&u) {
                Some(n) => Error::Usage(Usage {
                    message: format!("{n}: {}", u.message),
                    ..u
                }),
                None => Error::Usage(u),
            },
            e => e,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(u) => f.write_str(&u.message),
            Error::NotFound(m) | Error::Status { message: m, .. } => f.write_str(m),
            Error::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Display shows the top of the chain; the rest follows as sources.
            Error::Io(e) => e.chain().nth(1),
            _ => None,
        }
    }
}

impl From<anyhow::Error> for Error {
    /// An error that is one of these already (raised deep down, carried up through `anyhow`)
    /// keeps its type; any other is an I/O error.
    fn from(e: anyhow::Error) -> Error {
        match e.downcast::<Error>() {
            Ok(typed) => typed,
            Err(e) => Error::Io(e),
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::Io(e.into())
    }
}

/// The library's result.
pub type Result<T> = std::result::Result<T, Error>;

/// Whether `err` is, or was caused by, a closed pipe: the reader of the output (`| head`)
/// stopped reading, which is success.
fn broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return io.kind() == std::io::ErrorKind::BrokenPipe;
        }
        matches!(cause.downcast_ref::<Error>(), Some(Error::Io(inner)) if broken_pipe(inner))
    })
}

/// The exit status for a command that failed with `err`, and the line to print (`None`: a
/// closed pipe, success said nothing). The one place errors become exit statuses.
pub fn exit_status(err: &anyhow::Error) -> (i32, Option<String>) {
    if broken_pipe(err) {
        return (0, None);
    }
    let message: Vec<String> = err.chain().map(|c| c.to_string()).collect();
    let code = err
        .chain()
        .find_map(|c| c.downcast_ref::<Error>())
        .map_or(1, Error::code);
    (code, Some(format!("omnish: {}", message.join(": "))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn each_kind_has_its_status_and_one_line() {
        let e: anyhow::Error = Error::bad(Field::Since, "invalid duration 'x'").into();
        assert_eq!(
            exit_status(&e),
            (2, Some("omnish: invalid duration 'x'".into()))
        );
        let e: anyhow::Error = Error::NotFound("no session matches 'zz'".into()).into();
        assert_eq!(exit_status(&e).0, 1);
        let e = anyhow::Error::from(Error::Status {
            code: 127,
            message: "cannot run shell 'x'".into(),
        })
        .context("wrap");
        assert_eq!(
            exit_status(&e),
            (127, Some("omnish: wrap: cannot run shell 'x'".into()))
        );
        // Typed errors raised below and carried up through anyhow keep their type.
        let deep: anyhow::Error = Error::usage("too small").into();
        let back = Error::from(deep);
        assert_eq!(back.code(), 2);
        // I/O errors keep the chain of what was being done.
        let io = std::io::Error::other("disk on fire");
        let e: anyhow::Error = Err::<(), _>(io).context("cannot read x").unwrap_err();
        let typed: anyhow::Error = Error::from(e).into();
        assert_eq!(
            exit_status(&typed),
            (1, Some("omnish: cannot read x: disk on fire".into()))
        );
    }

    #[test]
    fn a_closed_pipe_is_success_however_deep() {
        let pipe = || std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert_eq!(exit_status(&anyhow::Error::from(pipe())), (0, None));
        let typed: anyhow::Error = Error::from(pipe()).into();
        assert_eq!(exit_status(&typed), (0, None));
        let wrapped: anyhow::Error =
            Error::from(anyhow::Error::from(pipe()).context("writing")).into();
        assert_eq!(exit_status(&wrapped), (0, None));
    }

    #[test]
    fn front_ends_name_the_field() {
        let e = Error::bad(Field::Since, "invalid duration 'x'")
            .named(|u| u.field.map(|f| f.flag().to_string()));
        assert_eq!(e.to_string(), "--since: invalid duration 'x'");
        assert_eq!(e.code(), 2);
    }
}
