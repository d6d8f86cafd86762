//! Throughput of `omnish::term::render::render` on ~100 MB of realistic terminal output:
//! coloured compiler/test-runner log lines, `\r` progress bars with erase-in-line, and
//! multi-line progress blocks redrawn with cursor-up.
//!
//! Also: the streaming API (`feed_into` with a line cap) on the same input, 200 MB of a
//! single line without a newline through a renderer capped at 8192 chars (bounded memory; the
//! unit test of the same check is `#[ignore]`d because it is slow in debug builds), and text
//! that is not all UTF-8 (Latin-1 accents, stray bytes): `vte` alone against
//! `omnish::term::render::advance`, which hands it one invalid sequence at a time.
//!
//! Run with: `cargo bench --bench render` (plain std::time, no harness).

mod support;
use std::hint::black_box;
use std::time::Instant;
use support::{CRATES, Rng};

use omnish::term::render::{Line, LineSink, Renderer, render};

const TARGET_BYTES: usize = 100 * 1024 * 1024;

fn generate() -> Vec<u8> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = String::with_capacity(TARGET_BYTES + 4096);
    let mut n = 0u64;
    while out.len() < TARGET_BYTES {
        n += 1;
        let krate = CRATES[rng.below(CRATES.len() as u64) as usize];
        match rng.below(100) {
            // Coloured cargo status line.
            0..=34 => out.push_str(&format!(
                "\x1b[1m\x1b[92m   Compiling\x1b[0m {krate} v1.{}.{} (/home/dev/src/{krate})\r\n",
                rng.below(40),
                rng.below(20)
            )),
            // Test runner results.
            35..=59 => {
                let ok = rng.below(20) != 0;
                out.push_str(&format!(
                    "test {krate}::tests::case_{n} ... {}\r\n",
                    if ok {
                        "\x1b[32mok\x1b[0m"
                    } else {
                        "\x1b[31mFAILED\x1b[0m"
                    }
                ));
            }
            // A rustc warning block.
            60..=69 => out.push_str(&format!(
                "\x1b[1m\x1b[33mwarning\x1b[0m\x1b[1m: unused variable: `x{n}`\x1b[0m\r\n\
                 \x1b[1m\x1b[94m  --> \x1b[0msrc/{krate}/lib.rs:{}:9\r\n\
                 \x1b[1m\x1b[94m   |\x1b[0m\r\n\
                 \x1b[1m\x1b[94m{:<3}|\x1b[0m     let x{n} = compute(&input);\r\n\
                 \x1b[1m\x1b[94m   |\x1b[0m         \x1b[1m\x1b[33m^^^\x1b[0m \
                 \x1b[1m\x1b[33mhelp: prefix it with an underscore\x1b[0m\r\n",
                rng.below(900) + 1,
                rng.below(900) + 1
            )),
            // A `\r` progress bar (cargo style), then the line it leaves behind.
            70..=84 => {
                let total = 20 + rng.below(30);
                for done in (0..=total).step_by(3) {
                    let width = 40 * done / total;
                    out.push_str(&format!(
                        "\r\x1b[1m\x1b[96m    Building\x1b[0m [{}>{}] {done}/{total}: {krate}\x1b[K",
                        "=".repeat(width as usize),
                        " ".repeat(40 - width as usize)
                    ));
                }
                out.push_str("\r\x1b[K");
            }
            // A three-line progress block redrawn with cursor-up (docker/npm style).
            _ => {
                let layers = ["a1b2c3d4e5f6", "0f1e2d3c4b5a", "deadbeef0123"];
                for step in 0..6u64 {
                    if step > 0 {
                        out.push_str("\x1b[3A");
                    }
                    for (i, layer) in layers.iter().enumerate() {
                        let pct = ((step + i as u64) * 20).min(100);
                        let bar = "█".repeat((pct / 5) as usize);
                        out.push_str(&format!(
                            "\r{layer}: Downloading {bar:<20} {pct:>3}%\x1b[K\r\n"
                        ));
                    }
                }
            }
        }
    }
    out.into_bytes()
}

/// Counts lines and keeps the last one.
#[derive(Default)]
struct Count {
    lines: usize,
    last: (String, u64, String),
}

impl LineSink for Count {
    fn line(&mut self, line: Line<'_>) {
        self.lines += 1;
        self.last = (line.head.to_string(), line.omitted, line.tail.to_string());
    }
    fn erase_scrollback(&mut self) {
        self.lines = 0;
    }
}

/// 16 MiB of French text in Latin-1 (an invalid UTF-8 byte every 6 bytes or so), fed in 64 KiB
/// chunks: to `vte` as it is (a search for `ESC` to the chunk's end per invalid byte), through
/// `advance`, and rendered.
fn not_utf8() {
    struct Nothing;
    impl vte::Perform for Nothing {}
    let line = b"d\xe9j\xe0 vu, cr\xe8me br\xfbl\xe9e, gar\xe7on, na\xefve fa\xe7ade \xa9 2026\r\n";
    let input: Vec<u8> = line.repeat(16 * 1024 * 1024 / line.len());
    let mb = input.len() as f64 / (1024.0 * 1024.0);
    let start = Instant::now();
    let mut p = vte::Parser::new();
    for chunk in input.chunks(64 * 1024) {
        p.advance(&mut Nothing, black_box(chunk));
    }
    let alone = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let mut p = vte::Parser::new();
    for chunk in input.chunks(64 * 1024) {
        omnish::term::render::advance(&mut p, &mut Nothing, black_box(chunk));
    }
    let pieces = start.elapsed().as_secs_f64();
    let start = Instant::now();
    black_box(capped(&input));
    let rendered = start.elapsed().as_secs_f64();
    println!(
        "{mb:.0} MiB of Latin-1 text, 64 KiB chunks: vte alone {alone:.3} s ({:.1} MiB/s), \
         render::advance {pieces:.3} s ({:.1} MiB/s), rendered {rendered:.3} s ({:.1} MiB/s)",
        mb / alone,
        mb / pieces,
        mb / rendered
    );
}

/// `input` streamed in 64 KiB chunks through a renderer with a line cap, as the context engine
/// reads an output.
fn capped(input: &[u8]) -> Count {
    let mut r = Renderer::with_line_cap(120, 50, 8192);
    let mut sink = Count::default();
    for chunk in input.chunks(64 * 1024) {
        r.feed_into(black_box(chunk), &mut sink);
    }
    r.finish_into(&mut sink);
    sink
}

/// 200 MB of one line (digits, byte i is i % 10, ending in "END") fed in 64 KiB chunks.
fn huge_line() {
    const TOTAL: usize = 200 * 1000 * 1000;
    const CAP: usize = 8192;
    let pattern: Vec<u8> = (0..65_546u32).map(|i| b'0' + (i % 10) as u8).collect();
    let start = Instant::now();
    let mut r = Renderer::with_line_cap(120, 50, CAP);
    let mut sink = Count::default();
    let mut sent = 0;
    while sent < TOTAL {
        let n = (64 * 1024).min(TOTAL - sent);
        let shift = sent % 10;
        let mut piece = pattern[shift..shift + n].to_vec();
        if sent + n == TOTAL {
            piece[n - 3..].copy_from_slice(b"END");
        }
        r.feed_into(black_box(&piece), &mut sink);
        sent += n;
    }
    r.finish_into(&mut sink);
    let secs = start.elapsed().as_secs_f64();
    let (head, omitted, tail) = &sink.last;
    let digits = |from: usize, n: usize| -> String {
        (from..from + n)
            .map(|i| char::from(b'0' + (i % 10) as u8))
            .collect()
    };
    assert_eq!(sink.lines, 1);
    assert_eq!(*head, digits(0, CAP / 2));
    assert_eq!(*omitted, (TOTAL - CAP) as u64);
    assert_eq!(
        *tail,
        format!("{}END", digits(TOTAL - CAP / 2, CAP / 2 - 3))
    );
    println!(
        "one 200 MB line, cap {CAP}: {secs:.3} s, {:.1} MiB/s, head/tail/omitted ok",
        TOTAL as f64 / (1024.0 * 1024.0) / secs
    );
}

fn main() {
    let input = generate();
    let mb = input.len() as f64 / (1024.0 * 1024.0);
    println!("input: {mb:.1} MiB of generated terminal output");

    let mut best = f64::MAX;
    let mut lines = 0;
    for run in 1..=3 {
        let start = Instant::now();
        let out = black_box(render(black_box(&input), 120, 50));
        let secs = start.elapsed().as_secs_f64();
        lines = out.len();
        println!("render() run {run}: {secs:.3} s, {:.1} MiB/s", mb / secs);
        best = best.min(secs);
    }

    // The same input fed in 64 KiB chunks, as the recorder's reader would.
    let start = Instant::now();
    let mut r = Renderer::new(120, 50);
    for chunk in input.chunks(64 * 1024) {
        r.feed(black_box(chunk));
    }
    let out = black_box(r.finish());
    let chunked = start.elapsed().as_secs_f64();
    assert_eq!(out.len(), lines);
    println!(
        "feed() in 64 KiB chunks: {chunked:.3} s, {:.1} MiB/s",
        mb / chunked
    );

    // Streaming with a line cap, as the context engine does.
    let start = Instant::now();
    let sink = capped(&input);
    let streamed = start.elapsed().as_secs_f64();
    assert_eq!(sink.lines, lines);
    println!(
        "feed_into() with a line cap, 64 KiB chunks: {streamed:.3} s, {:.1} MiB/s",
        mb / streamed
    );

    huge_line();
    not_utf8();

    println!("output: {lines} lines");
    println!(
        "best: {:.1} MiB/s ({:.1} MB/s)",
        mb / best,
        input.len() as f64 / 1e6 / best
    );
    println!("reproduce: cargo bench --bench render");
}
