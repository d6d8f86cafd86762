//! Sections a document carries besides the commands: pinned [`notes`], an environment
//! snapshot ([`env`](mod@env)) and the project's [`files`].

pub(crate) mod env;
pub(crate) mod files;
pub(crate) mod notes;
