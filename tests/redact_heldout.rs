//! The held-out redaction score (issue 19, "Redaction that generalizes"): secrets shaped after
//! every rule of gitleaks' public rule set, printed the ways a terminal shows them, and harmless
//! look-alikes (gitleaks' own false-positive samples and issue 19's list), in
//! tests/fixtures/redact/heldout/ (see its README.md). The corpus is kept apart from
//! tests/fixtures/redact/, which the redactor's rules were written against, so that it measures
//! how the rules generalize.
//!
//! The test prints the score (secrets redacted, look-alikes kept, misses by shape) and fails when
//! it drops below the floors: raise them when the score goes up, never lower them.
//!
//! Run: `cargo test --test redact_heldout -- --nocapture`.

use omnish::context::stages::redact::redact;
use std::collections::BTreeMap;
use std::sync::LazyLock;

static MARKER: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"\[REDACTED:[a-z0-9-]+\]").unwrap());

/// Lowest accepted share of held-out secrets redacted, in percent.
const SECRETS_FLOOR: f64 = 100.0;
/// Lowest accepted share of held-out look-alikes left byte for byte unchanged, in percent.
const LOOKALIKES_FLOOR: f64 = 100.0;

/// Deterministic fake characters for `⟨cN⟩`: N characters of class c. The classes are those of
/// heldout/generate.py.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn chars(&mut self, class: char, n: usize) -> String {
        const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
        const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
        const DIGITS: &str = "0123456789";
        let alphabet: String = match class {
            'a' => [UPPER, LOWER, DIGITS].concat(),
            'L' => [UPPER, LOWER].concat(),
            'l' => LOWER.into(),
            'U' => UPPER.into(),
            'H' => [UPPER, DIGITS].concat(),
            'n' => [LOWER, DIGITS].concat(),
            'h' => "0123456789abcdef".into(),
            'F' => "0123456789ABCDEF".into(),
            'd' => DIGITS.into(),
            'b' => [UPPER, LOWER, DIGITS, "+/"].concat(),
            'u' => [UPPER, LOWER, DIGITS, "_-"].concat(),
            'w' => [UPPER, LOWER, DIGITS, "_"].concat(),
            'G' => "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L".into(),
            'g' => "qpzry9x8gf2tvdw0s3jn54khce6mua7l".into(),
            _ => panic!("unknown class {class}"),
        };
        let a: Vec<char> = alphabet.chars().collect();
        (0..n)
            .map(|_| a[(self.next() % a.len() as u64) as usize])
            .collect()
    }
}

fn expand(text: &str, g: &mut Gen) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('⟨') {
        out.push_str(&rest[..open]);
        let after = &rest[open + '⟨'.len_utf8()..];
        let close = after.find('⟩').expect("unclosed ⟨");
        let spec = &after[..close];
        let class = spec.chars().next().unwrap();
        let n: usize = spec[1..].parse().expect("⟨cN⟩");
        out.push_str(&g.chars(class, n));
        rest = &after[close + '⟩'.len_utf8()..];
    }
    out.push_str(rest);
    out
}

/// One case: `== rule/shape: where`, then the text; `«…»` marks each secret.
struct Case {
    name: String,
    shape: String,
    input: String,
    secrets: Vec<String>,
}

fn corpus(file: &str) -> Vec<Case> {
    let path = format!(
        "{}/tests/fixtures/redact/heldout/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let mut cases = Vec::new();
    for (i, block) in text.split("\n== ").skip(1).enumerate() {
        let (head, body) = block.split_once('\n').unwrap();
        let name = head.split(':').next().unwrap().trim().to_string();
        let shape = name.split_once('/').map_or("", |(_, s)| s).to_string();
        let body = expand(body.trim_end_matches('\n'), &mut Gen(i as u64 + 19));
        let (mut input, mut secrets) = (String::new(), Vec::new());
        let mut rest = body.as_str();
        while let Some(open) = rest.find('«') {
            input.push_str(&rest[..open]);
            let after = &rest[open + '«'.len_utf8()..];
            let close = after.find('»').expect("unclosed «");
            input.push_str(&after[..close]);
            secrets.push(after[..close].to_string());
            rest = &after[close + '»'.len_utf8()..];
        }
        input.push_str(rest);
        cases.push(Case {
            name,
            shape,
            input,
            secrets,
        });
    }
    cases
}

fn pct(n: usize, of: usize) -> f64 {
    100.0 * n as f64 / of.max(1) as f64
}

#[test]
fn heldout_score() {
    let mut secrets = corpus("secrets.gen.txt");
    secrets.extend(corpus("secrets.hand.txt"));
    let lookalikes = corpus("lookalikes.txt");
    assert!(secrets.len() >= 300 && lookalikes.len() >= 100);

    let (mut total, mut redacted) = (0, 0);
    let mut missed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for c in &secrets {
        assert!(!c.secrets.is_empty(), "{}: no secret marked", c.name);
        let out = redact(&c.input);
        // What the output shows besides the markers, and what the input shows besides the
        // secrets (a piece of a secret that is also in its name, `CLOJARS_`, is no leak).
        let shown = MARKER.replace_all(&out, "\u{0}");
        let mut context = c.input.clone();
        for s in &c.secrets {
            context = context.replace(s.as_str(), "\u{0}");
        }
        for s in &c.secrets {
            total += 1;
            // Redacted: no 8-character piece of the secret survives (a secret shortened by a
            // few characters still leaks).
            let chars: Vec<char> = s.chars().collect();
            let leaks = chars.len() < 8 && shown.contains(s.as_str())
                || chars.windows(8).step_by(4).any(|w| {
                    let w: String = w.iter().collect();
                    shown.contains(&w) && !context.contains(&w)
                });
            if leaks {
                if std::env::var_os("OMNISH_HELDOUT_VERBOSE").is_some() {
                    println!("MISS {}\n  in:  {:?}\n  out: {:?}", c.name, c.input, out);
                }
                missed
                    .entry(c.shape.clone())
                    .or_default()
                    .push(c.name.clone());
            } else {
                redacted += 1;
            }
        }
    }
    let mut mangled: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut kept = 0;
    for c in &lookalikes {
        let out = redact(&c.input);
        if out == c.input {
            kept += 1;
        } else {
            let kind = c.name.split('/').next().unwrap().to_string();
            mangled
                .entry(kind)
                .or_default()
                .push(format!("{}\n      {:?}", c.name, out));
        }
    }
    let s_pct = pct(redacted, total);
    let l_pct = pct(kept, lookalikes.len());
    println!("held-out secrets redacted:  {redacted}/{total} = {s_pct:.1}%");
    println!(
        "held-out look-alikes kept: {kept}/{} = {l_pct:.1}%",
        lookalikes.len()
    );
    for (shape, names) in &missed {
        println!(
            "  missed secrets, {shape}: {} ({})",
            names.len(),
            names.join(" ")
        );
    }
    for (kind, names) in &mangled {
        println!("  mangled look-alikes, {kind}: {}", names.len());
        for n in names {
            println!("    {n}");
        }
    }
    assert!(
        s_pct >= SECRETS_FLOOR,
        "secrets redacted {s_pct:.1}% < {SECRETS_FLOOR}%"
    );
    assert!(
        l_pct >= LOOKALIKES_FLOOR,
        "look-alikes kept {l_pct:.1}% < {LOOKALIKES_FLOOR}%"
    );
}
