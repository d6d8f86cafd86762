//! The MCP server's message handling on arbitrary bytes, each line one message, against a small
//! store (one session, three commands): it never panics, answers with at most one line per
//! line read, every answer is one JSON-RPC 2.0 object whose id is null, a string or an integer
//! (as sent), and an error (or a tool error) stays short whatever was sent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use omnish::mcp::{Config, serve};
use serde_json::value::RawValue;
use std::path::PathBuf;
use std::sync::OnceLock;

const SESSION: &str = "20261126T100000.000Z-f00d01";

/// A msgpack frame `[ms, 1, bin]` as stream.bin holds them.
fn frame(ms: u64, data: &[u8]) -> Vec<u8> {
    let mut f = vec![0x93, 0xcf];
    f.extend_from_slice(&ms.to_be_bytes());
    f.push(0x01);
    f.push(0xc4);
    f.push(data.len() as u8);
    f.extend_from_slice(data);
    f
}

/// The store, written once per process.
fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("omnish-fuzz-mcp-{}", std::process::id()));
        let dir = root.join("sessions").join(SESSION);
        std::fs::create_dir_all(&dir).unwrap();
        let meta = format!(
            r#"{{"id":"{SESSION}","shell":"/bin/bash","argv":["bash"],"pid":1,"recorder_pid":0,"hostname":"h","cwd":"/proj","started_at":1000,"ended_at":9000,"exit_status":0,"omnish_version":"0","state":"exited","cols":80,"rows":24,"hooked":true}}"#
        );
        std::fs::write(dir.join("meta.json"), meta).unwrap();
        let outputs: [(&str, &[u8], i32); 3] = [
            ("echo hi", b"hi\r\n", 0),
            ("ls /nope\n```\nignore this", b"ls: cannot access '/nope'\r\n", 2),
            ("printf '\\e[31m`````\\n'", b"\x1b[31m`````\r\nAKIAQ7XZ3MPLK2JD9W4N\r\n", 0),
        ];
        let (mut stream, mut lines) = (Vec::new(), String::new());
        for (i, (line, out, code)) in outputs.iter().enumerate() {
            let seq = i as u64 + 1;
            let f = frame(1000 + seq * 10, out);
            let record = serde_json::json!({
                "command_id": format!("{SESSION}:{seq}"), "session_id": SESSION, "seq": seq,
                "command_line": line, "cwd": "/proj", "started_at": 1000 + seq * 10,
                "ended_at": 1005 + seq * 10, "exit_code": code,
                "stream_offset": stream.len(), "stream_length": f.len(), "cols": 80,
                "command_source": "hook",
            });
            stream.extend_from_slice(&f);
            lines.push_str(&record.to_string());
            lines.push('\n');
        }
        std::fs::write(dir.join("stream.bin"), stream).unwrap();
        std::fs::write(dir.join("commands.jsonl"), lines).unwrap();
        Config::at(root, PathBuf::from("/proj"))
    })
}

/// Most bytes an answer that is an error may take (an id of up to 1 KiB and a message).
const ERROR_MAX: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let mut out = Vec::new();
    serve(config(), &mut &data[..], &mut out).unwrap();
    let lines_in = data.split(|&b| b == b'\n').count();
    let answers: Vec<&[u8]> = out.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    assert!(answers.len() <= lines_in, "{} answers to {lines_in} lines", answers.len());
    for line in answers {
        let fields: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(line).expect("an answer is a JSON object");
        assert_eq!(fields["jsonrpc"], "2.0");
        let raw: std::collections::HashMap<String, Box<RawValue>> =
            serde_json::from_slice(line).unwrap();
        let id = raw["id"].get();
        let digits = id.strip_prefix('-').unwrap_or(id);
        assert!(
            id == "null"
                || id.starts_with('"')
                || (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())),
            "id {id}"
        );
        let is_error = fields.contains_key("error") || fields["result"]["isError"] == true;
        assert!(
            !is_error || line.len() <= ERROR_MAX,
            "a {}-byte error: {}",
            line.len(),
            String::from_utf8_lossy(&line[..300.min(line.len())])
        );
    }
});
