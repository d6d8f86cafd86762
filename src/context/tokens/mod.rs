//! What the budget counts with: the [`tokenizer`]s and the model profiles ([`models`]) that
//! pick one and a budget.

pub(crate) mod models;
pub(crate) mod tokenizer;
