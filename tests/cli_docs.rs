//! Shell completions and the man page are committed files generated from the clap definition
//! (`omnish::cli::Cli`). These tests regenerate them and fail when the committed copies are
//! stale; `OMNISH_BLESS=1 cargo test --test cli_docs` rewrites them. A second test keeps
//! README.md naming every subcommand and every `omnish context` option.

use std::path::{Path, PathBuf};

use clap::CommandFactory;
use clap_complete::Shell;
use omnish::cli::Cli;

const BLESS_VAR: &str = "OMNISH_BLESS";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The clap command, built, so subcommands carry their full bin names (`omnish context`).
fn command() -> clap::Command {
    let mut cmd = Cli::command();
    cmd.build();
    cmd
}

/// Subcommands a user can run, without clap's generated `help`.
fn subcommands(cmd: &clap::Command) -> Vec<&clap::Command> {
    cmd.get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .collect()
}

fn completion(shell: Shell) -> String {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "omnish", &mut buf);
    String::from_utf8(buf).expect("completion script is UTF-8")
}

fn nushell_completion() -> String {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(clap_complete_nushell::Nushell, &mut cmd, "omnish", &mut buf);
    String::from_utf8(buf).expect("completion script is UTF-8")
}

/// The preamble roff puts at the start of every rendered piece; kept once, at the top.
const ROFF_PREAMBLE: &str = ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n";

/// One rendered man page section, without roff's per-render preamble.
fn piece(render: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> String {
    let mut buf = Vec::new();
    render(&mut buf).expect("rendering to memory cannot fail");
    let text = String::from_utf8(buf).expect("man page is UTF-8");
    text.strip_prefix(ROFF_PREAMBLE)
        .map(str::to_owned)
        .unwrap_or(text)
}

/// Drops a piece's leading `.SH` heading line.
fn body(piece: String) -> String {
    match piece.strip_prefix(".SH ") {
        Some(rest) => rest.split_once('\n').map_or("", |(_, b)| b).to_owned(),
        None => piece,
    }
}

/// Escapes plain text for a roff text line.
fn roff_text(s: &str) -> String {
    let s = s
        .replace('\\', "\\e")
        .replace('-', "\\-")
        .replace('\'', "\\*(Aq");
    if s.starts_with('.') {
        format!("\\&{s}")
    } else {
        s
    }
}

/// One page, readable with `man -l man/omnish.1`: the top-level NAME, SYNOPSIS, DESCRIPTION and
/// OPTIONS, a COMMANDS overview, then a section per subcommand (its synopsis, description,
/// options and examples), then VERSION.
fn man_page() -> String {
    let cmd = command();
    let man = clap_mangen::Man::new(cmd.clone());
    let mut page = String::from(ROFF_PREAMBLE);
    page += &piece(|w| man.render_title(w));
    page += &piece(|w| man.render_name_section(w));
    page += &piece(|w| man.render_synopsis_section(w));
    page += &piece(|w| man.render_description_section(w));
    page += &piece(|w| man.render_options_section(w));

    let subs = subcommands(&cmd);
    page += ".SH COMMANDS\n";
    for sub in &subs {
        let name = sub.get_bin_name().unwrap_or_else(|| sub.get_name());
        page += &format!(".TP\n\\fB{}\\fR\n", roff_text(name));
        if let Some(about) = sub.get_about() {
            page += &format!("{}\n", roff_text(&about.to_string()));
        }
        page += &format!(
            ".br\nSee \\fB{}\\fR below.\n",
            roff_text(&name.to_uppercase())
        );
    }

    for sub in subs {
        let name = sub.get_bin_name().unwrap_or_else(|| sub.get_name());
        let sub_man = clap_mangen::Man::new(sub.clone());
        page += &format!(".SH \"{}\"\n", roff_text(&name.to_uppercase()));
        page += &body(piece(|w| sub_man.render_synopsis_section(w)));
        page += ".PP\n";
        page += &body(piece(|w| sub_man.render_description_section(w)));
        // Subcommand options and examples become subsections of the subcommand's section.
        page +=
            &piece(|w| sub_man.render_options_section(w)).replace(".SH OPTIONS\n", ".SS Options\n");
        if sub.get_after_help().is_some() || sub.get_after_long_help().is_some() {
            page += ".SS Examples\n";
            let extra = body(piece(|w| sub_man.render_extra_section(w)));
            // The after-help text starts with its own "Examples:" line; the heading says it.
            let extra = extra
                .strip_prefix("Examples:\n")
                .map(str::to_owned)
                .unwrap_or(extra);
            page += &extra;
        }
    }

    page += &piece(|w| man.render_version_section(w));
    page
}

/// Every generated file: path relative to the crate root, and its expected contents.
fn generated() -> Vec<(&'static str, String)> {
    vec![
        ("completions/omnish.bash", completion(Shell::Bash)),
        ("completions/_omnish", completion(Shell::Zsh)),
        ("completions/omnish.fish", completion(Shell::Fish)),
        ("completions/omnish.nu", nushell_completion()),
        ("man/omnish.1", man_page()),
    ]
}

#[test]
fn generated_docs_are_up_to_date() {
    let bless = std::env::var_os(BLESS_VAR).is_some_and(|v| !v.is_empty() && v != "0");
    let mut stale = Vec::new();
    for (rel, want) in generated() {
        let path = root().join(rel);
        let have = std::fs::read_to_string(&path).ok();
        if have.as_deref() == Some(want.as_str()) {
            continue;
        }
        if bless {
            std::fs::create_dir_all(path.parent().expect("generated files live in a directory"))
                .unwrap_or_else(|e| panic!("creating the directory for {rel}: {e}"));
            std::fs::write(&path, &want).unwrap_or_else(|e| panic!("writing {rel}: {e}"));
            eprintln!("wrote {rel}");
        } else if have.is_none() {
            stale.push(format!("{rel} is missing"));
        } else {
            stale.push(format!(
                "{rel} is stale (it differs from what src/cli.rs generates)"
            ));
        }
    }
    assert!(
        stale.is_empty(),
        "generated CLI docs are out of date:\n  {}\nRegenerate them with `{BLESS_VAR}=1 cargo test --test cli_docs` and commit the result.",
        stale.join("\n  ")
    );
}

#[test]
fn generation_is_deterministic() {
    assert_eq!(generated(), generated());
}

/// Whether `text` contains `word` not followed by a character that would continue a command
/// or option name (so `--last` is not satisfied by `--last-seen`).
fn mentions(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        !text[i + word.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })
}

#[test]
fn readme_names_every_subcommand_and_context_option() {
    let readme_path: &Path = &root().join("README.md");
    let readme = std::fs::read_to_string(readme_path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", readme_path.display()));
    let cmd = command();
    let mut missing = Vec::new();

    for sub in subcommands(&cmd) {
        let invocation = format!("omnish {}", sub.get_name());
        if !mentions(&readme, &invocation) {
            missing.push(format!("subcommand `{invocation}`"));
        }
    }

    let context = cmd
        .find_subcommand("context")
        .expect("the CLI has a `context` subcommand");
    for arg in context.get_arguments().filter(|a| !a.is_hide_set()) {
        let Some(long) = arg.get_long() else { continue };
        if long == "help" {
            continue;
        }
        let option = format!("--{long}");
        if !mentions(&readme, &option) {
            missing.push(format!("`omnish context {option}`"));
        }
    }

    assert!(
        missing.is_empty(),
        "README.md does not mention:\n  {}\nDocument them in README.md.",
        missing.join("\n  ")
    );
}
