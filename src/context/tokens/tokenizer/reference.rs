//! Tests that every count equals tiktoken-rs's `encode_ordinary(text).len()` (a dev-dependency):
//! random text built to stress the split pattern and the merge, and every fixture, README and
//! source file of the repository.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proptest::prelude::*;
use tiktoken_rs::CoreBPE;

use super::{TOKENIZERS, tokenizer};

/// tiktoken-rs's encoder for one of our BPE tokenizer names.
fn reference(name: &str) -> &'static CoreBPE {
    static O200K: OnceLock<CoreBPE> = OnceLock::new();
    static CL100K: OnceLock<CoreBPE> = OnceLock::new();
    match name {
        "o200k" => O200K.get_or_init(|| tiktoken_rs::o200k_base().unwrap()),
        "cl100k" => CL100K.get_or_init(|| tiktoken_rs::cl100k_base().unwrap()),
        other => panic!("no reference for {other}"),
    }
}

const BPE: [&str; 2] = ["o200k", "cl100k"];

fn assert_same(name: &str, text: &str, what: &str) {
    let ours = tokenizer(name).unwrap().count(text);
    let theirs = reference(name).encode_ordinary(text).len();
    assert_eq!(ours, theirs, "{name} count of {what}: {text:?}");
}

/// Fragments chosen to hit every alternative of both patterns and their edges.
const FRAGMENTS: &[&str] = &[
    // ASCII words, digits, punctuation
    "a",
    "b",
    "hello",
    "World",
    "HTTP",
    "camelCase",
    "snake_case",
    "x86_64",
    "0",
    "7",
    "42",
    "1234",
    "99999",
    "3.14159",
    "-",
    "_",
    ".",
    ",",
    ";",
    ":",
    "!",
    "?",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "<",
    ">",
    "/",
    "\\",
    "|",
    "#",
    "$",
    "%",
    "&",
    "*",
    "+",
    "=",
    "@",
    "^",
    "`",
    "~",
    "\"",
    "==>",
    "...",
    "//",
    "/*",
    "::",
    "->",
    "<|endoftext|>",
    "<|fim_prefix|>",
    // whitespace, alone and in runs, with and without newlines
    " ",
    "  ",
    "    ",
    "\t",
    "\t\t",
    "\n",
    "\n\n",
    "\r",
    "\r\n",
    " \n",
    "\n ",
    " \r\n  ",
    "\u{a0}",
    "\u{2003}",
    "\u{3000}",
    "\u{85}",
    "\u{2028}",
    "\u{b}",
    "\u{c}",
    // apostrophes and contractions, both cases, and the long s that folds to s
    "'",
    "''",
    "'s",
    "'S",
    "'t",
    "'T",
    "'re",
    "'RE",
    "'Re",
    "'ve",
    "'VE",
    "'m",
    "'M",
    "'ll",
    "'LL",
    "'lL",
    "'d",
    "'D",
    "'x",
    "'\u{17f}",
    "don't",
    "I'M",
    "we'll",
    "\u{2019}s",
    // other scripts: upper, lower, title case, modifier letters, combining marks
    "Привет",
    "мир",
    "ΑΘΗΝΑ",
    "αθήνα",
    "Straße",
    "ǅ",
    "ǈemo",
    "ǲ",
    "ʰ",
    "ˈ",
    "e\u{301}",
    "a\u{308}\u{323}",
    "\u{301}",
    "\u{20dd}",
    "ا",
    "العربية",
    "שלום",
    "हिन्दी",
    "ไทย",
    "한국어",
    "こんにちは",
    "カタカナ",
    "世界",
    "中文字",
    "ｆｕｌｌ",
    "Ⅻ",
    "½",
    "٣٤٥",
    "१२३",
    "𝟘𝟙",
    // emoji and symbols, with joiners and variation selectors
    "😀",
    "👍🏽",
    "👨\u{200d}👩\u{200d}👧",
    "❤\u{fe0f}",
    "🇫🇷",
    "€",
    "©",
    "→",
    "✓",
    "\u{200b}",
    "\u{feff}",
    "\u{1b}[31m",
    "\u{0}",
    "\u{7f}",
    "\u{fffd}",
];

fn fragment_text(max: usize) -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        6 => proptest::sample::select(FRAGMENTS).prop_map(str::to_string),
        1 => "[0-9]{1,20}",
        1 => "[a-zA-Z]{1,12}",
        1 => " {1,6}",
        1 => "\\PC{1,4}",
        1 => any::<char>().prop_map(|c| c.to_string()),
    ];
    proptest::collection::vec(piece, 0..max).prop_map(|v| v.concat())
}

/// Long single pieces (at least tiktoken's 100 bytes), merged by the heap.
fn long_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ab]{90,300}",
        "[a-z]{100,400}",
        "[=\\-*#]{100,300}",
        "[а-я]{50,200}",
        "(ab|ba|aab|xyz|the){30,120}",
        "[A-Za-z0-9+/]{100,400}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn counts_equal_tiktoken_on_stressing_text(text in fragment_text(40)) {
        for name in BPE {
            let ours = tokenizer(name).unwrap().count(&text);
            let theirs = reference(name).encode_ordinary(&text).len();
            prop_assert_eq!(ours, theirs, "{} {:?}", name, text);
        }
    }

    #[test]
    fn counts_equal_tiktoken_on_long_pieces(
        text in long_piece(),
        before in fragment_text(3),
        after in fragment_text(3),
    ) {
        let text = format!("{before}{text}{after}");
        for name in BPE {
            let ours = tokenizer(name).unwrap().count(&text);
            let theirs = reference(name).encode_ordinary(&text).len();
            prop_assert_eq!(ours, theirs, "{} {:?}", name, text);
        }
    }

    #[test]
    fn counts_equal_tiktoken_on_any_text(text in "\\PC{0,60}|(?s:.{0,60})") {
        for name in BPE {
            let ours = tokenizer(name).unwrap().count(&text);
            let theirs = reference(name).encode_ordinary(&text).len();
            prop_assert_eq!(ours, theirs, "{} {:?}", name, text);
        }
    }
}

fn files_under(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, keep, out);
        } else if keep(&path) {
            out.push(path);
        }
    }
}

#[test]
fn counts_equal_tiktoken_on_repository_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md"), root.join("build.rs")];
    let ext = |e: &'static str| move |p: &Path| p.extension().is_some_and(|x| x == e);
    files_under(&root.join("src"), &ext("rs"), &mut files);
    files_under(&root.join("tests"), &ext("rs"), &mut files);
    files_under(&root.join("benches"), &ext("rs"), &mut files);
    let render = |p: &Path| p.extension().is_some_and(|x| x == "expected" || x == "raw");
    files_under(&root.join("tests/fixtures/render"), &render, &mut files);
    // The shared originals, when this checkout sits next to them.
    files_under(&root.join("../shared/fixtures/render"), &render, &mut files);
    let expected = files
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "expected"))
        .count();
    assert!(expected >= 5, "render fixtures missing: {files:?}");
    assert!(files.len() > 50, "{files:?}");
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        // Raw terminal captures are not always UTF-8; count what a reader would see.
        let text = String::from_utf8_lossy(&bytes);
        for name in BPE {
            assert_same(name, &text, &path.display().to_string());
        }
    }
}

#[test]
fn counts_equal_tiktoken_on_edge_cases() {
    let mut cases: Vec<String> = [
        "",
        " ",
        "  ",
        "a",
        " a",
        "  a",
        "   a",
        "\t a",
        " \ta",
        "a ",
        "a  ",
        "a  b",
        "a \n b",
        "a\n\n  b",
        "  \n",
        "\n  ",
        "\r\n\r\n",
        " \r",
        "x\u{a0}\u{a0}y",
        "1 2",
        "1  2",
        "12345678",
        "he's",
        "HE'S",
        "he'\u{17f}",
        "don't stop",
        "  'll",
        "!!!\n\n",
        " !!!//\n",
        "a/b//c\n/",
        "\u{3000}\u{3000}字",
        "ǅungla",
        "Ǆ",
        "\u{301}a",
        "a\u{301}\u{301}b",
    ]
    .map(str::to_string)
    .to_vec();
    cases.push("a".repeat(1000));
    cases.push(" ".repeat(1000) + "x");
    cases.push("\n".repeat(500));
    cases.push("9".repeat(999));
    cases.push("ab".repeat(400));
    for name in TOKENIZERS.iter().filter(|n| BPE.contains(n)) {
        for text in &cases {
            assert_same(name, text, "edge case");
        }
    }
}
