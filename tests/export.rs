//! `omnish export` on sessions recorded from a real bash, each format read back by an
//! independent reader: the real `asciinema` CLI for the casts, Python's `html.parser` and a
//! headless Chromium for the page, serde_json for JSON.

mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The AWS key the session prints (built from two pieces in the shell, so that no command
/// line holds it whole).
const KEY: &str = "AKIAQ7XZ3MPLK2JD9W4N";

fn export_cmd(h: &Harness, args: &[&str]) -> Command {
    let mut cmd = Command::new(omnish_bin());
    cmd.arg("export")
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", h.home.path())
        .env("OMNISH_DATA_DIR", h.data())
        .stdin(Stdio::null());
    cmd
}

fn export(h: &Harness, args: &[&str]) -> Output {
    export_cmd(h, args).output().unwrap()
}

fn ok(out: Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A bash session whose output has colours, markup, backticks and secrets: one in colours,
/// one printed in two writes (two frames).
fn session() -> Harness {
    let mut h = Harness::bash(&[]);
    h.run("echo hello");
    h.run(
        "printf '\\e[1;31merror\\e[0m: <script>document.title=1337</script> & more\\n'; (exit 3)",
    );
    h.run("a=AKIAQ7XZ; b=3MPLK2JD9W4N; printf \"key \\e[32m$a\\e[35m$b\\e[0m end\\n\"");
    h.run("printf 'split AKIAQ7XZ3M'; sleep 0.3; printf 'PLK2JD9W4N\\n'");
    h.run("seq 1 30");
    h.run("printf '%s\\n' 'a ```` b' '```'");
    h
}

/// `s` without escape sequences (CSI and OSC), as a terminal shows its text.
fn strip_ansi(s: &str) -> String {
    let re =
        regex::Regex::new(r"\x1b\[[0-9;:?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)").unwrap();
    re.replace_all(s, "").into_owned()
}

#[test]
fn markdown_folds_each_output_and_fences_it_safely() {
    let h = session();
    let md = ok(export(&h, &["--format", "markdown"]));
    assert_eq!(md.matches("<details>").count(), 6, "{md}");
    assert_eq!(md.matches("</details>").count(), 6, "{md}");
    assert!(md.contains("## 1. `$ echo hello`"), "{md}");
    assert!(md.contains("exit 3"), "{md}");
    // Every line of seq, not context's 20.
    let seq: Vec<String> = (1..=30).map(|i| i.to_string()).collect();
    assert!(md.contains(&seq.join("\n")), "{md}");
    // The fence is longer than the output's longest run of backticks (4).
    assert!(md.contains("`````console\na ```` b\n```\n`````"), "{md}");
    // Redacted, the coloured one and the one cut in two frames too; colours dropped.
    assert!(!md.contains(KEY), "{md}");
    assert_eq!(md.matches("[REDACTED:aws-access-key]").count(), 2, "{md}");
    assert!(!md.contains('\x1b'), "{md}");
    // --no-redact keeps it.
    let raw = ok(export(&h, &["--format", "markdown", "--no-redact"]));
    assert!(raw.contains(&format!("key {KEY} end")), "{raw}");
    // The selection options of context.
    let failed = ok(export(&h, &["--failed"]));
    assert_eq!(failed.matches("<details>").count(), 1, "{failed}");
    let last = ok(export(&h, &["--last", "--max-lines", "4"]));
    assert!(last.contains("$ printf '%s\\n'"), "{last}");
}

/// A value learned from a later command (an assignment printed by the second) is redacted
/// where an earlier command printed it bare, in every format that redacts: export learns from
/// the whole session before it writes, and a line in which learning found nothing is checked
/// again when it holds a learned value.
#[test]
fn a_value_learned_from_a_later_command_is_redacted_in_an_earlier_one() {
    const VALUE: &str = "qX7vR2mK9pL4sT8wZ3";
    let mut h = Harness::bash(&[]);
    h.run(&format!("echo deploying the build with {VALUE} now"));
    h.run(&format!("printf 'DEPLOY_PASSWORD=%s\\n' {VALUE}"));
    for format in ["markdown", "json", "html", "asciicast"] {
        let out = ok(export(&h, &["--format", format]));
        assert!(!out.contains(VALUE), "{format}: {out}");
        assert!(out.contains("deploying the build with"), "{format}: {out}");
    }
}

/// A private key block printed by one command is the marker, whole, in every format, and the
/// lines around it are kept: HTML writes the lines learning rendered and checked without
/// checking them again, but a block's lines (in which the detectors find nothing on their
/// own) are still found by the block around them.
#[test]
fn a_private_key_block_is_redacted_whole_in_every_format() {
    const BODY: &str = "plainkeybodyline";
    let mut h = Harness::bash(&[]);
    h.run("echo before the key");
    h.run(&format!(
        "printf '%s\\n' 'header' '-----BEGIN OPENSSH PRIVATE KEY-----' {BODY}one {BODY}two \
         '-----END OPENSSH PRIVATE KEY-----' 'footer'"
    ));
    for format in ["markdown", "json", "html", "asciicast"] {
        let out = ok(export(&h, &["--format", format]));
        assert!(!out.contains(BODY), "{format}: {out}");
        assert!(out.contains("[REDACTED:private-key]"), "{format}: {out}");
        assert!(
            out.contains("footer") && out.contains("header"),
            "{format}: {out}"
        );
        assert!(out.contains("before the key"), "{format}: {out}");
    }
}

#[test]
fn json_is_contexts_document_with_whole_outputs() {
    let h = session();
    let json = ok(export(&h, &["--format", "json"]));
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["version"], 1);
    let cmds = doc["commands"].as_array().unwrap();
    assert_eq!(cmds.len(), 6);
    let seq = cmds
        .iter()
        .find(|c| c["command_line"] == "seq 1 30")
        .unwrap();
    assert_eq!(seq["output_lines"], 30);
    assert_eq!(seq["omitted_lines"], 0);
    assert!(!json.contains(KEY), "{json}");
    assert_eq!(
        doc["notes"],
        serde_json::json!([]),
        "notes are not exported"
    );
}

/// The page through Python's html.parser: the tags it has, and its text.
const PARSE_HTML: &str = r#"
import html.parser, json, sys
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text, self.styles, self.stack = [], [], [], []
    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.stack.append(tag)
        for k, v in attrs:
            if k == "style": self.styles.append(v)
            if k.startswith("on") or k in ("src", "href"): self.tags.append("ATTR:" + k)
    def handle_endtag(self, tag):
        if self.stack: self.stack.pop()
    def handle_data(self, data):
        if "style" not in self.stack and "title" not in self.stack: self.text.append(data)
p = P()
p.feed(sys.stdin.read())
p.close()
print(json.dumps({"tags": sorted(set(p.tags)), "text": "".join(p.text), "styles": p.styles}))
"#;

fn python() -> String {
    std::env::var("OMNISH_TEST_PYTHON").unwrap_or_else(|_| "python3".into())
}

#[test]
fn html_is_one_page_that_shows_markup_as_text() {
    let h = session();
    let page = ok(export(&h, &["--format", "html"]));
    let out = run_piped(
        {
            let mut c = Command::new(python());
            c.args(["-c", PARSE_HTML]);
            c
        },
        &page,
    );
    let parsed: serde_json::Value = serde_json::from_str(&ok(out)).unwrap();
    let tags: Vec<&str> = parsed["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let allowed = [
        "body", "code", "h1", "h2", "head", "html", "meta", "p", "pre", "section", "span", "style",
        "title",
    ];
    for t in &tags {
        assert!(
            allowed.contains(t),
            "unexpected tag or attribute {t}: {page}"
        );
    }
    let text = parsed["text"].as_str().unwrap();
    // The recorded markup is text; colours are spans; secrets are gone, coloured or split.
    assert!(
        text.contains("error: <script>document.title=1337</script> & more"),
        "{text}"
    );
    let styles = parsed["styles"].to_string();
    assert!(
        styles.contains("color:#f14c4c;font-weight:bold"),
        "{styles}"
    );
    assert!(!text.contains(KEY), "{text}");
    assert!(text.contains("key [REDACTED:aws-access-key] end"), "{text}");
    assert!(text.contains("split [REDACTED:aws-access-key]"), "{text}");
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "no external asset"
    );

    // And in a browser: no script ran (the title is the page's), the markup is text.
    let browser = ["chromium-headless-shell", "chromium", "chromium-browser"]
        .into_iter()
        .find(|b| have(b));
    let Some(browser) = browser else {
        skip("no headless Chromium (chromium-headless-shell)");
        return;
    };
    let file = h.home.path().join("page.html");
    std::fs::write(&file, &page).unwrap();
    let dom = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--dump-dom",
            &format!("file://{}", file.display()),
        ])
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.contains("<title>omnish: session "), "{dom}");
    assert!(!dom.contains("1337</title>"), "{dom}");
    assert!(
        dom.contains("&lt;script&gt;document.title=1337&lt;/script&gt;"),
        "{dom}"
    );
    assert_eq!(dom.matches("<script").count(), 0, "{dom}");
}

/// The events of an asciicast: (time, code, data).
fn events(cast: &str) -> (serde_json::Value, Vec<(f64, String, String)>) {
    let mut lines = cast.lines();
    let header = serde_json::from_str(lines.next().unwrap()).unwrap();
    let events = lines
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v[0].as_f64().unwrap(),
                v[1].as_str().unwrap().to_string(),
                v[2].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (header, events)
}

#[test]
fn asciicasts_play_in_asciinema_with_a_marker_per_command() {
    let h = session();
    let v3 = ok(export(&h, &["--format", "asciicast"]));
    let v2 = ok(export(&h, &["--format", "asciicast-v2"]));
    let (h3, e3) = events(&v3);
    let (h2, e2) = events(&v2);
    assert_eq!(h3["version"], 3);
    assert_eq!(
        (h3["term"]["cols"].as_u64(), h3["term"]["rows"].as_u64()),
        (Some(80), Some(24))
    );
    assert_eq!(h2["version"], 2);
    assert_eq!(
        (h2["width"].as_u64(), h2["height"].as_u64()),
        (Some(80), Some(24))
    );
    let markers: Vec<&str> = e3
        .iter()
        .filter(|e| e.1 == "m")
        .map(|e| e.2.as_str())
        .collect();
    assert_eq!(markers.len(), 6, "{markers:?}");
    assert_eq!(markers[0], "echo hello");
    assert_eq!(markers[4], "seq 1 30");
    // The same events: v3's intervals add up to v2's times.
    assert_eq!(e3.len(), e2.len());
    let mut t = 0.0;
    for (a, b) in e3.iter().zip(&e2) {
        t += a.0;
        assert!((t - b.0).abs() < 0.01, "{t} vs {}", b.0);
        assert_eq!((&a.1, &a.2), (&b.1, &b.2));
    }
    assert!(
        e2.windows(2).all(|w| w[0].0 <= w[1].0),
        "times never go back"
    );
    let output: String = e3
        .iter()
        .filter(|e| e.1 == "o")
        .map(|e| e.2.as_str())
        .collect();
    let shown = strip_ansi(&output);
    assert!(!shown.contains(KEY), "{shown}");
    assert!(
        shown.contains("key [REDACTED:aws-access-key] end"),
        "{shown}"
    );
    assert!(shown.contains("split [REDACTED:aws-access-key]"), "{shown}");
    assert!(
        output.contains("\x1b[1;31merror\x1b[0m"),
        "colours kept: {output:?}"
    );
    // Keys are not events; the prompt of the recording is not in any command's range.
    assert!(e3.iter().all(|e| e.1 == "o" || e.1 == "m"), "{e3:?}");
    assert!(!shown.contains(PROMPT), "{shown}");

    // The real asciinema CLI reads the v2 file back: what it prints is the output events.
    if !require("asciinema") {
        return;
    }
    let file = h.home.path().join("s.cast");
    std::fs::write(&file, &v2).unwrap();
    let cat = Command::new("asciinema")
        .arg("cat")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        cat.status.success(),
        "{}",
        String::from_utf8_lossy(&cat.stderr)
    );
    let played = String::from_utf8(cat.stdout).unwrap();
    assert_eq!(played, output);
    assert!(
        strip_ansi(&played).contains("$ echo hello\r\nhello\r\n"),
        "{played:?}"
    );
}

#[test]
fn a_file_is_written_whole_and_private_and_bad_input_is_one_line() {
    let h = session();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.html");
    let out = export(&h, &["--format", "html", "-o", file.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(written, ok(export(&h, &["--format", "html"])));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary file left"
    );
    // Nothing matched: status 1, one line, no file.
    let none = dir.path().join("none.md");
    let out = export(
        &h,
        &["--grep", "no such thing", "-o", none.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no command matched"));
    assert!(!none.exists());
    // Usage errors: status 2, one line.
    let out = export(&h, &["--format", "pdf"]);
    assert_eq!(out.status.code(), Some(2));
    let out = export(&h, &["--since", "soon"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--since"), "{err}");
}

/// Runs `omnish export ARGS` with stdout to `out` and returns its peak RSS in KiB. Measured by
/// a small Python parent (this test process holds the whole screen, and a child forked from it
/// would count that in its peak).
fn peak_rss(h: &Harness, args: &[&str], out: &Path) -> u64 {
    let script = "import resource, subprocess, sys\n\
        with open(sys.argv[1], 'wb') as f:\n\
        \x20   p = subprocess.run(sys.argv[2:], stdout=f)\n\
        assert p.returncode == 0, p.returncode\n\
        print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)";
    let mut cmd = Command::new(python());
    cmd.args(["-c", script])
        .arg(out)
        .arg(omnish_bin())
        .arg("export")
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", h.home.path())
        .env("OMNISH_DATA_DIR", h.data());
    ok(cmd.output().unwrap()).trim().parse().unwrap()
}

/// A ten-megabyte line with more output after it, in every format, in bounded memory. (The
/// same on 100 MB outputs, in release: `cargo bench --bench export`; a debug build redacts too
/// slowly for this suite.)
#[test]
fn a_ten_megabyte_line_exports_in_bounded_memory() {
    let mut h = Harness::bash(&[]);
    h.run_huge("head -c 10000000 /dev/zero | tr '\\0' b; echo ' line'; seq 1 3; echo end");
    let dir = tempfile::tempdir().unwrap();
    for (format, tail) in [
        ("markdown", "b line\n1\n2\n3\nend\n```\n\n</details>"),
        ("asciicast", "end\\r\\n\"]"),
        (
            "html",
            "…[9983621 chars omitted]</span>\n1\n2\n3\nend</pre>\n</section>\n</body>\n</html>",
        ),
    ] {
        let out = dir.path().join(format);
        let rss = peak_rss(&h, &["--format", format, "--last"], &out);
        assert!(rss < 64 * 1024, "{format}: peak RSS {rss} KiB");
        let size = std::fs::metadata(&out).unwrap().len();
        assert!(size > 16_000, "{format}: {size} bytes");
        let mut f = std::fs::File::open(&out).unwrap();
        use std::io::{Read, Seek};
        f.seek(std::io::SeekFrom::Start(size.saturating_sub(4096)))
            .unwrap();
        let mut end = Vec::new();
        f.read_to_end(&mut end).unwrap();
        let end = String::from_utf8_lossy(&end);
        assert!(end.trim_end().ends_with(tail), "{format}: …{end}");
    }
}

/// Commands of `omnish exec` (run from outside, and typed in the wrapped shell with its output
/// in a pipe) live in sessions attached to the terminal's: export shows them as part of the
/// terminal's session, merged by time, each labelled with its author, in every format.
#[test]
fn sessions_of_omnish_exec_are_exported_as_part_of_the_terminals() {
    let mut h = Harness::bash(&[]);
    let id = omnish::store::dir_id(&h.session_dir());
    // From outside, before anything was typed: the first command of the export.
    let bot = Command::new(omnish_bin())
        .args(["exec", "--session", &id, "--label", "bot", "--"])
        .args(["sh", "-c", "echo first-from-bot"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", h.home.path())
        .env("OMNISH_DATA_DIR", h.data())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(bot.status.success(), "{bot:?}");
    h.run("echo typed-before");
    // In the wrapped shell, its output in a pipe: a record of its own, attached.
    h.run(&format!(
        "{} exec --label ci -- sh -c 'echo from-ci; exit 3' | cat",
        omnish_bin()
    ));
    h.run("echo typed-after");
    let attached = std::fs::read_dir(h.session_dir().join("attached"))
        .unwrap()
        .count();
    assert_eq!(attached, 2, "two sessions attached");

    let md = ok(export(&h, &[]));
    assert!(
        md.contains(&format!("5 commands from session `{id}`")),
        "{md}"
    );
    assert!(!md.contains("sessions"), "one session: {md}");
    let at = |s: &str| md.find(s).unwrap_or_else(|| panic!("{s} missing: {md}"));
    assert!(at("$ sh -c 'echo first-from-bot'") < at("$ echo typed-before"));
    assert!(at("$ echo typed-before") < at("$ sh -c 'echo from-ci; exit 3'"));
    assert!(at("$ sh -c 'echo from-ci; exit 3'") < at("$ echo typed-after"));
    assert!(
        md.lines()
            .any(|l| l.contains("· by `ci` ·") && l.contains("· exit 3 ·")),
        "{md}"
    );
    assert!(md.lines().any(|l| l.contains("· by `bot` ·")), "{md}");

    let page = ok(export(&h, &["--format", "html"]));
    assert!(
        page.contains(&format!("<title>omnish: session {id}</title>")),
        "{page}"
    );
    let at = |s: &str| {
        page.find(s)
            .unwrap_or_else(|| panic!("{s} missing: {page}"))
    };
    assert!(at("first-from-bot") < at("typed-before"));
    assert!(at("by ci · exit 3") < at("typed-after"), "{page}");

    for format in ["asciicast", "asciicast-v2"] {
        let (header, events) = events(&ok(export(&h, &["--format", format])));
        assert_eq!(header["title"], format!("omnish: session {id}"), "{header}");
        let markers: Vec<&str> = events
            .iter()
            .filter(|e| e.1 == "m")
            .map(|e| e.2.as_str())
            .collect();
        assert_eq!(markers.len(), 5, "{markers:?}");
        assert_eq!(markers[0], "sh -c 'echo first-from-bot'");
        assert_eq!(markers[1], "echo typed-before");
        assert_eq!(markers[3], "sh -c 'echo from-ci; exit 3'");
        assert_eq!(markers[4], "echo typed-after");
        assert!(
            events.iter().all(|e| e.1 != "r"),
            "one terminal size: {events:?}"
        );
    }

    let json: serde_json::Value =
        serde_json::from_str(&ok(export(&h, &["--format", "json"]))).unwrap();
    let authors: Vec<&str> = json["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["author"].as_str().unwrap())
        .collect();
    assert_eq!(authors, ["bot", "user", "user", "ci", "user"], "{json}");
}

/// The page that loads a cast into asciinema's own player (`asciinema-player`, the JS player of
/// asciinema's site and servers, which reads asciicast v3) and writes what the player made of
/// it into `#result`: its duration and the time of each marker (sought as a viewer picks a
/// chapter). (Not the text on its terminal: the player paints it on animation frames, which a
/// headless browser dumping its DOM runs when it likes, so a read of it was found to show an
/// earlier or a later moment. The text of the events is the v2 file's, which the real
/// `asciinema cat` reads back above.)
const PLAYER_PAGE: &str = r#"<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
<div id="player"></div><pre id="result">pending</pre>
<script>PLAYER_JS</script>
<script>
const out = document.getElementById('result');
const sleep = ms => new Promise(r => setTimeout(r, ms));
async function read() {
  const el = document.getElementById('player');
  const player = AsciinemaPlayer.create({data: CAST}, el, {preload: true});
  for (let i = 0; i < 500 && player.getDuration() === undefined; i++) await sleep(10);
  const duration = player.getDuration();
  const times = [];
  for (let k = 0; k < MARKERS; k++) {
    await player.seek({marker: k});
    times.push(player.getCurrentTime());
  }
  return {duration, times};
}
read().then(r => out.textContent = JSON.stringify(r), e => out.textContent = 'error: ' + e);
</script></body></html>"#;

/// The bundle of asciinema-player that scripts/test-deps.sh installs (pinned).
fn asciinema_player() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("OMNISH_TEST_ASCIINEMA_PLAYER")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join(
                "target/ci-asciinema-player/node_modules/asciinema-player/dist/bundle/asciinema-player.min.js",
            )
        });
    path.is_file().then_some(path)
}

/// An asciicast v3 read by an independent reader: asciinema's player, in a headless Chromium.
/// It reads the file (a header or an event it does not take fails it), and its duration and
/// the time of each marker are the sums of the events' intervals.
#[test]
fn asciicast_v3_plays_in_asciinemas_player() {
    let h = session();
    let cast = ok(export(&h, &["--format", "asciicast"]));
    let (header, events) = events(&cast);
    assert_eq!(header["version"], 3);
    let Some(player) = asciinema_player() else {
        skip("asciinema-player is not installed (scripts/test-deps.sh installs it)");
        return;
    };
    let browser = ["chromium-headless-shell", "chromium", "chromium-browser"]
        .into_iter()
        .find(|b| have(b));
    let Some(browser) = browser else {
        skip("no headless Chromium (chromium-headless-shell)");
        return;
    };
    // What the file says, read here: each marker's time, the duration.
    let mut t = 0.0;
    let mut want = Vec::new();
    for (dt, code, _) in &events {
        t += dt;
        if code == "m" {
            want.push(t);
        }
    }
    assert_eq!(want.len(), 6, "{want:?}");
    // The cast as a JS string; `</` escaped so that the recorded `</script>` stays in it.
    let cast_js = serde_json::to_string(&cast).unwrap().replace("</", "<\\/");
    // The player's code last: nothing is replaced in it.
    let page = PLAYER_PAGE
        .replace("MARKERS", &want.len().to_string())
        .replace("CAST", &cast_js)
        .replace("PLAYER_JS", &std::fs::read_to_string(&player).unwrap());
    let file = h.home.path().join("player.html");
    std::fs::write(&file, page).unwrap();
    let dom = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=20000",
            "--dump-dom",
            &format!("file://{}", file.display()),
        ])
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    let result = dom
        .split_once("<pre id=\"result\">")
        .and_then(|(_, r)| r.split_once("</pre>"))
        .map(|(r, _)| {
            r.replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&amp;", "&")
        })
        .unwrap_or_else(|| panic!("no result: {dom}"));
    let got: serde_json::Value = serde_json::from_str(&result)
        .unwrap_or_else(|e| panic!("the player did not read the cast ({e}): {result}"));
    let duration = got["duration"].as_f64().unwrap();
    assert!((duration - t).abs() < 0.01, "duration {duration} vs {t}");
    let times = got["times"].as_array().unwrap();
    assert_eq!(times.len(), want.len(), "{got}");
    for (k, (time, at)) in want.iter().zip(times).enumerate() {
        let at = at.as_f64().unwrap();
        assert!((at - time).abs() < 0.01, "marker {k}: {at} vs {time}");
    }
}
