//! Model profiles: how much context a language model can take and how to count its tokens.
//!
//! [`resolve_model`] maps a name as users write it to a [`ModelProfile`]; its
//! [`ModelProfile::default_budget`] is the token budget when `--model` is given without `--budget`.
//!
//! ## The matching rule
//!
//! 1. The name is lower-cased and trimmed; a `provider/` prefix (`openai/gpt-4o`,
//!    `ollama/llama3.1`) and an ollama `:tag` (`llama3.2:3b`, `qwen2.5-coder:7b`) are dropped.
//! 2. What is left must equal a profile's name or one of its aliases, or
//! 3. equal one after removing, repeatedly, a release suffix: a dated snapshot (`-2024-08-06`,
//!    `-20241022`, `-0613`), `-latest` or `-preview` (`gpt-4o-2024-08-06` → `gpt-4o`), or
//! 4. belong to a family whose members share one profile: `claude-*` (and `sonnet`, `opus`,
//!    `haiku`) and `gemini-*`.
//!
//! Anything else is an error that lists the known names: `gpt-4o-nonexistent-variant` is not
//! silently taken for `gpt-4o`.

use anyhow::{Result, bail};

/// What omnish knows about a language model: how much it can read and how to count for it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ModelProfile {
    /// Canonical name, as listed in errors and help.
    pub name: &'static str,
    /// Other names that select this profile exactly (the name itself always does).
    pub aliases: &'static [&'static str],
    /// Context window in tokens. For local models this is the window they are usually *run*
    /// with (ollama's default `num_ctx`), not what the weights support.
    pub context_window: usize,
    /// Fraction of the window the shell context may take by default; the rest is left for the
    /// question, system prompt and answer.
    pub budget_share: f32,
    /// Tokenizer to count with (one of [`crate::context::tokens::tokenizer::TOKENIZERS`]).
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

/// Every known model. To add one, add a line; names are matched by the rule in the module docs.
///
/// Tokenizers: OpenAI models use their own (`o200k`, `cl100k`). Anthropic and Google do not
/// publish theirs; `o200k` is used as an approximation, and the generous windows leave room for
/// its error. Local models use `cl100k`, which is close to Llama 3's tokenizer; models with
/// small-vocabulary tokenizers (Mistral, Code Llama, DeepSeek Coder) need more tokens for the same
/// text, so their share is lower.
pub(crate) const MODELS: &[ModelProfile] = &[
    // OpenAI
    profile("gpt-5", &["gpt-5-chat"], 400_000, 0.25, "o200k"),
    profile("gpt-5-mini", &[], 400_000, 0.25, "o200k"),
    profile("gpt-5-nano", &[], 400_000, 0.25, "o200k"),
    profile("gpt-4.1", &[], 1_047_576, 0.1, "o200k"),
    profile("gpt-4.1-mini", &[], 1_047_576, 0.1, "o200k"),
    profile("gpt-4.1-nano", &[], 1_047_576, 0.1, "o200k"),
    profile("gpt-4o", &["chatgpt-4o"], 128_000, 0.25, "o200k"),
    profile("gpt-4o-mini", &[], 128_000, 0.25, "o200k"),
    profile("o1", &[], 200_000, 0.25, "o200k"),
    profile("o1-mini", &[], 128_000, 0.25, "o200k"),
    profile("o3", &[], 200_000, 0.25, "o200k"),
    profile("o3-mini", &[], 200_000, 0.25, "o200k"),
    profile("o4-mini", &[], 200_000, 0.25, "o200k"),
    profile("gpt-4-turbo", &[], 128_000, 0.25, "cl100k"),
    profile("gpt-4", &[], 8_192, 0.5, "cl100k"),
    profile(
        "gpt-3.5-turbo",
        &["gpt-3.5-turbo-16k"],
        16_385,
        0.5,
        "cl100k",
    ),
    // Anthropic (tokenizer approximated); every `claude-*` name, see FAMILIES
    profile(
        "claude",
        &["sonnet", "opus", "haiku"],
        200_000,
        0.25,
        "o200k",
    ),
    // Google (tokenizer approximated); every `gemini-*` name, see FAMILIES
    profile("gemini", &[], 1_000_000, 0.1, "o200k"),
    // Local models, as ollama runs them by default
    profile("llama3", &["llama-3"], 8_192, 0.5, "cl100k"),
    profile("llama3.1", &["llama-3.1"], 8_192, 0.5, "cl100k"),
    profile("llama3.2", &["llama-3.2"], 8_192, 0.5, "cl100k"),
    profile("llama3.3", &["llama-3.3"], 8_192, 0.5, "cl100k"),
    profile("qwen2.5", &["qwen-2.5"], 8_192, 0.5, "cl100k"),
    profile("qwen2.5-coder", &["qwen-2.5-coder"], 8_192, 0.5, "cl100k"),
    profile("qwen3", &["qwen-3"], 8_192, 0.5, "cl100k"),
    profile("qwen3-coder", &["qwen-3-coder"], 8_192, 0.5, "cl100k"),
    profile("phi3", &["phi-3"], 4_096, 0.5, "cl100k"),
    profile("phi4", &["phi-4"], 8_192, 0.5, "cl100k"),
    profile("gemma2", &["gemma-2"], 8_192, 0.5, "cl100k"),
    profile("gemma3", &["gemma-3"], 8_192, 0.5, "cl100k"),
    profile("codegemma", &[], 8_192, 0.5, "cl100k"),
    profile("mistral", &[], 4_096, 0.4, "cl100k"),
    profile("codestral", &[], 4_096, 0.4, "cl100k"),
    profile("codellama", &["code-llama"], 4_096, 0.4, "cl100k"),
    profile("starcoder2", &[], 4_096, 0.4, "cl100k"),
    profile("deepseek-coder", &[], 4_096, 0.4, "cl100k"),
    profile("deepseek-coder-v2", &[], 8_192, 0.5, "cl100k"),
    profile("deepseek-r1", &[], 8_192, 0.5, "cl100k"),
    profile("gpt-oss", &[], 8_192, 0.5, "o200k"),
];

/// Families whose members all share one profile: `claude-opus-4-1` is `claude`.
const FAMILIES: &[&str] = &["claude", "gemini"];

/// `name` without one release suffix (`-latest`, `-preview`, a dated snapshot such as
/// `-2024-08-06`, `-20241022` or `-0613`), or `None` when it has none.
fn strip_release_suffix(name: &str) -> Option<&str> {
    for s in ["-latest", "-preview"] {
        if let Some(rest) = name.strip_suffix(s) {
            return Some(rest);
        }
    }
    let (rest, last) = name.rsplit_once('-')?;
    let digits = |t: &str, n: usize| t.len() == n && t.bytes().all(|b| b.is_ascii_digit());
    if digits(last, 8) || digits(last, 4) {
        return Some(rest); // -20241022, -0613
    }
    let (rest, month) = rest.rsplit_once('-')?;
    let (rest, year) = rest.rsplit_once('-')?;
    (digits(last, 2) && digits(month, 2) && digits(year, 4)).then_some(rest) // -2024-08-06
}

fn exact(base: &str) -> Option<&'static ModelProfile> {
    MODELS
        .iter()
        .find(|p| p.name == base || p.aliases.contains(&base))
}

/// The profile for a model name as users write it, by the rule in the module docs; an unknown
/// name is an error listing the known ones.
pub(crate) fn resolve_model(name: &str) -> Result<&'static ModelProfile> {
    let lower = name.trim().to_lowercase();
    let base = lower.rsplit('/').next().unwrap_or("");
    let base = base.split(':').next().unwrap_or("");
    let mut candidate = base;
    loop {
        if candidate.is_empty() {
            break;
        }
        if let Some(p) = exact(candidate) {
            return Ok(p);
        }
        match strip_release_suffix(candidate) {
            Some(rest) => candidate = rest,
            None => break,
        }
    }
    for family in FAMILIES {
        if base
            .strip_prefix(family)
            .is_some_and(|rest| rest.starts_with('-'))
        {
            return exact(family).ok_or_else(|| unreachable_family(family));
        }
    }
    let names: Vec<&str> = MODELS.iter().map(|p| p.name).collect();
    bail!(
        "unknown model '{name}'; known models: {} (claude-* and gemini-* names, dated snapshots, \
         -latest and -preview are accepted; or set a token budget directly)",
        names.join(", ")
    )
}

fn unreachable_family(family: &str) -> anyhow::Error {
    anyhow::anyhow!("model family '{family}' has no profile")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::tokens::tokenizer::tokenizer;

    #[test]
    fn resolves_names_tags_and_providers() {
        let cases = [
            ("gpt-4o", "gpt-4o"),
            ("GPT-4o", "gpt-4o"),
            ("openai/gpt-4o", "gpt-4o"),
            ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
            ("gpt-4o-2024-08-06", "gpt-4o"),
            ("chatgpt-4o-latest", "gpt-4o"),
            ("gpt-4.1-nano", "gpt-4.1-nano"),
            ("gpt-4.1-2025-04-14", "gpt-4.1"),
            ("gpt-4-0613", "gpt-4"),
            ("gpt-4-turbo-preview", "gpt-4-turbo"),
            ("gpt-4-turbo-2024-04-09", "gpt-4-turbo"),
            ("gpt-3.5-turbo-16k", "gpt-3.5-turbo"),
            ("o3-mini", "o3-mini"),
            ("o4-mini", "o4-mini"),
            ("gpt-5-mini", "gpt-5-mini"),
            ("claude-3-5-sonnet-20241022", "claude"),
            ("anthropic/claude-sonnet-4", "claude"),
            ("claude-3-5-haiku-latest", "claude"),
            ("sonnet", "claude"),
            ("gemini-2.5-pro", "gemini"),
            ("llama3.2:3b", "llama3.2"),
            ("llama3:8b", "llama3"),
            ("ollama/llama3.1:latest", "llama3.1"),
            ("qwen2.5-coder:7b", "qwen2.5-coder"),
            ("qwen2.5:7b", "qwen2.5"),
            ("deepseek-coder-v2:16b", "deepseek-coder-v2"),
            ("codegemma:7b", "codegemma"),
            ("starcoder2:3b", "starcoder2"),
            ("qwen3:4b", "qwen3"),
            ("phi3:mini", "phi3"),
            ("phi4", "phi4"),
            ("gemma3:1b", "gemma3"),
            ("mistral:7b-instruct", "mistral"),
            ("codellama:13b", "codellama"),
            ("deepseek-coder:6.7b", "deepseek-coder"),
            ("deepseek-r1:8b", "deepseek-r1"),
            ("gpt-oss:20b", "gpt-oss"),
            ("gemini-1.5-flash-latest", "gemini"),
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
        for bad in [
            "",
            "davinci",
            "foo/bar:baz",
            "/",
            ":x",
            "gpt-4o-nonexistent-variant",
            "gpt-4ox",
            "llama3.2-vision-x",
            "claudette",
            "-latest",
        ] {
            let err = resolve_model(bad).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("unknown model '{bad}'; known models: ")),
                "{err}"
            );
            assert!(err.contains("gpt-4o, gpt-4o-mini"), "{err}");
            assert!(err.contains("llama3.2"), "{err}");
            assert!(!err.contains("--"), "names no CLI flag: {err}");
        }
    }

    // ---- error lines ----
}
