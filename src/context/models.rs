//! Model profiles: how much context a language model can take and how to count its tokens.
//!
//! [`resolve_model`] maps a name as users write it to a [`ModelProfile`]; its
//! [`ModelProfile::default_budget`] is the token budget when `--model` is given without `--budget`.

use anyhow::{Result, bail};

/// What omnish knows about a language model: how much it can read and how to count for it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelProfile {
    /// Canonical name, as listed in errors and help.
    pub name: &'static str,
    /// Other name prefixes that select this profile (the name itself always does).
    pub aliases: &'static [&'static str],
    /// Context window in tokens. For local models this is the window they are usually *run*
    /// with (ollama's default `num_ctx`), not what the weights support.
    pub context_window: usize,
    /// Fraction of the window the shell context may take by default; the rest is left for the
    /// question, system prompt and answer.
    pub budget_share: f32,
    /// Tokenizer to count with (one of [`crate::context::tokenizer::TOKENIZERS`]).
    pub tokenizer: &'static str,
}

impl ModelProfile {
    /// Token budget for the context when none is given: `context_window * budget_share`.
    pub fn default_budget(&self) -> usize {
        (self.context_window as f64 * f64::from(self.budget_share)).floor() as usize
    }
}

const fn profile(
    name: &'static str,
    aliases: &'static [&'static str],
    context_window: usize,
    budget_share: f32,
    tokenizer: &'static str,
) -> ModelProfile {
    ModelProfile {
        name,
        aliases,
        context_window,
        budget_share,
        tokenizer,
    }
}

/// Every known model. To add one, add a line; the longest matching name or alias wins, so a more
/// specific entry (`gpt-4o-mini`) may sit beside a general one (`gpt-4o`).
///
/// Tokenizers: OpenAI models use their own (`o200k`, `cl100k`). Anthropic and Google do not
/// publish theirs; `o200k` is used as an approximation, and the generous windows leave room for
/// its error. Local models use `cl100k`, which is close to Llama 3's tokenizer; models with
/// small-vocabulary tokenizers (Mistral, Code Llama, DeepSeek Coder) need more tokens for the same
/// text, so their share is lower.
pub const MODELS: &[ModelProfile] = &[
    // OpenAI
    profile("gpt-5", &[], 400_000, 0.25, "o200k"),
    profile("gpt-4.1", &[], 1_047_576, 0.1, "o200k"),
    profile("gpt-4o", &["chatgpt-4o"], 128_000, 0.25, "o200k"),
    profile("gpt-4o-mini", &[], 128_000, 0.25, "o200k"),
    profile("o1", &[], 200_000, 0.25, "o200k"),
    profile("o3", &[], 200_000, 0.25, "o200k"),
    profile("o4-mini", &[], 200_000, 0.25, "o200k"),
    profile("gpt-4-turbo", &[], 128_000, 0.25, "cl100k"),
    profile("gpt-4", &[], 8_192, 0.5, "cl100k"),
    profile("gpt-3.5-turbo", &[], 16_385, 0.5, "cl100k"),
    // Anthropic (tokenizer approximated)
    profile(
        "claude",
        &["sonnet", "opus", "haiku"],
        200_000,
        0.25,
        "o200k",
    ),
    // Google (tokenizer approximated)
    profile("gemini", &[], 1_000_000, 0.1, "o200k"),
    // Local models, as ollama runs them by default
    profile("llama3", &["llama-3"], 8_192, 0.5, "cl100k"),
    profile("llama3.1", &["llama-3.1"], 8_192, 0.5, "cl100k"),
    profile("llama3.2", &["llama-3.2"], 8_192, 0.5, "cl100k"),
    profile("llama3.3", &["llama-3.3"], 8_192, 0.5, "cl100k"),
    profile("qwen2.5", &["qwen-2.5"], 8_192, 0.5, "cl100k"),
    profile("qwen3", &["qwen-3"], 8_192, 0.5, "cl100k"),
    profile("phi3", &["phi-3"], 4_096, 0.5, "cl100k"),
    profile("phi4", &["phi-4"], 8_192, 0.5, "cl100k"),
    profile("gemma2", &["gemma-2"], 8_192, 0.5, "cl100k"),
    profile("gemma3", &["gemma-3"], 8_192, 0.5, "cl100k"),
    profile("mistral", &[], 4_096, 0.4, "cl100k"),
    profile("codellama", &["code-llama"], 4_096, 0.4, "cl100k"),
    profile("deepseek-coder", &[], 4_096, 0.4, "cl100k"),
    profile("deepseek-r1", &[], 8_192, 0.5, "cl100k"),
    profile("gpt-oss", &[], 8_192, 0.5, "o200k"),
];

/// The profile for a model name as users write it: case-insensitive, with any `provider/` prefix
/// (`openai/gpt-4o`) and ollama `:tag` (`llama3.2:3b`) ignored; the longest known name or alias
/// that the rest starts with wins (`qwen2.5-coder:7b` → `qwen2.5`, `gpt-4o-mini-2024-07-18` →
/// `gpt-4o-mini`).
pub fn resolve_model(name: &str) -> Result<&'static ModelProfile> {
    let lower = name.trim().to_lowercase();
    let base = lower.rsplit('/').next().unwrap_or("");
    let base = base.split(':').next().unwrap_or("");
    let mut best: Option<(usize, &'static ModelProfile)> = None;
    if !base.is_empty() {
        for p in MODELS {
            for key in std::iter::once(&p.name).chain(p.aliases) {
                if base.starts_with(key) && best.is_none_or(|(len, _)| key.len() > len) {
                    best = Some((key.len(), p));
                }
            }
        }
    }
    match best {
        Some((_, p)) => Ok(p),
        None => {
            let names: Vec<&str> = MODELS.iter().map(|p| p.name).collect();
            bail!(
                "unknown model '{name}'; known models: {} (use --budget to set a token budget directly)",
                names.join(", ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::tokenizer::tokenizer;

    #[test]
    fn resolves_names_tags_and_providers() {
        let cases = [
            ("gpt-4o", "gpt-4o"),
            ("GPT-4o", "gpt-4o"),
            ("openai/gpt-4o", "gpt-4o"),
            ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
            ("gpt-4.1-nano", "gpt-4.1"),
            ("gpt-4-0613", "gpt-4"),
            ("gpt-4-turbo-preview", "gpt-4-turbo"),
            ("gpt-3.5-turbo-16k", "gpt-3.5-turbo"),
            ("o3-mini", "o3"),
            ("o4-mini", "o4-mini"),
            ("gpt-5-mini", "gpt-5"),
            ("anthropic/claude-sonnet-4", "claude"),
            ("claude-3-5-haiku-latest", "claude"),
            ("sonnet", "claude"),
            ("gemini-2.5-pro", "gemini"),
            ("llama3.2:3b", "llama3.2"),
            ("llama3:8b", "llama3"),
            ("ollama/llama3.1:latest", "llama3.1"),
            ("qwen2.5-coder:7b", "qwen2.5"),
            ("qwen3:4b", "qwen3"),
            ("phi3:mini", "phi3"),
            ("phi4", "phi4"),
            ("gemma3:1b", "gemma3"),
            ("mistral:7b-instruct", "mistral"),
            ("codellama:13b", "codellama"),
            ("deepseek-coder:6.7b", "deepseek-coder"),
            ("deepseek-r1:8b", "deepseek-r1"),
            ("gpt-oss:20b", "gpt-oss"),
            (
                "hf.co/bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M",
                "llama3.2",
            ),
        ];
        for (input, want) in cases {
            let got = resolve_model(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(got.name, want, "{input}");
        }
    }

    #[test]
    fn budgets_are_tight_for_local_models_and_generous_for_apis() {
        assert_eq!(resolve_model("llama3.2").unwrap().default_budget(), 4096);
        assert_eq!(resolve_model("phi3").unwrap().default_budget(), 2048);
        assert_eq!(resolve_model("gpt-4o").unwrap().default_budget(), 32_000);
        assert_eq!(
            resolve_model("claude-opus-4").unwrap().default_budget(),
            50_000
        );
        assert_eq!(resolve_model("gpt-4").unwrap().tokenizer, "cl100k");
        assert_eq!(resolve_model("gpt-4o").unwrap().tokenizer, "o200k");
        for p in MODELS {
            assert!(
                p.default_budget() > 0 && p.default_budget() < p.context_window,
                "{}",
                p.name
            );
            assert!(tokenizer(p.tokenizer).is_ok(), "{}", p.name);
        }
    }

    #[test]
    fn unknown_model_lists_names() {
        for bad in ["", "davinci", "foo/bar:baz", "/", ":x"] {
            let err = resolve_model(bad).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("unknown model '{bad}'; known models: ")),
                "{err}"
            );
            assert!(err.contains("gpt-4o, gpt-4o-mini"), "{err}");
            assert!(err.contains("llama3.2"), "{err}");
            assert!(
                err.ends_with("(use --budget to set a token budget directly)"),
                "{err}"
            );
        }
    }

    // ---- error lines ----
}
