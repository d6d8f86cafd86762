//! Token counting for the budget stage.
//!
//! Interface (to be implemented): `pub trait TokenCounter { fn name(&self) -> &str; fn count(&self,
//! text: &str) -> usize; }` and `pub fn tokenizer(name: &str) -> anyhow::Result<Box<dyn TokenCounter>>`.
