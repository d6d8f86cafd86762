//! Read stage of the context pipeline.
