//! Recording (`omnish wrap`): [`shell`] builds the hooked shell, [`pty`] runs it in a
//! pseudo-terminal and waits for events, which `relay` handles between the user's terminal
//! (`tty`) and the shell; [`marker`] finds the hooks' markers in its output and [`recorder`]
//! turns them into the [`crate::store`], which [`writer`] writes on its own thread.
//! [`line`](mod@line) bounds command lines and keeps the session's token out of what is written.

pub mod exec;
pub mod farkey;
pub mod line;
pub mod marker;
pub mod nest;
pub mod pty;
pub mod recorder;
pub(crate) mod relay;
pub mod screen;
pub mod shell;
pub(crate) mod tty;
pub mod typeahead;
pub mod writer;
