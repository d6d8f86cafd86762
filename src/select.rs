//! Select stage of the context pipeline.
