//! Format stage: text, markdown and json renderings of a [`crate::model::ContextDoc`].
