//! Recording (`omnish wrap`): [`shell`] builds the hooked shell, [`pty`] runs it, [`marker`]
//! finds the hooks' markers in its output and [`recorder`] turns them into
//! the [`crate::store`], which [`writer`] writes on its own thread. [`line`](mod@line) bounds command
//! lines and keeps the session's token out of what is written.

pub mod line;
pub mod marker;
pub mod nest;
pub mod pty;
pub mod recorder;
pub mod screen;
pub mod shell;
pub mod typeahead;
pub mod writer;
