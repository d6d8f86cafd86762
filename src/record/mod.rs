//! Recording (`omnish wrap`): [`shell`] builds the hooked shell, [`pty`] runs it, [`marker`]
//! finds the hooks' markers in its output and [`recorder`] writes the [`crate::store`].

pub mod marker;
pub mod pty;
pub mod recorder;
pub mod screen;
pub mod shell;
