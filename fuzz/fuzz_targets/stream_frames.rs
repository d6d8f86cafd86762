//! The stream readers on arbitrary `stream.bin` bytes: the streaming reader and the whole-range
//! decoder never panic, never allocate what a corrupt length claims, and agree on the frames.
#![no_main]

use libfuzzer_sys::fuzz_target;
use omnish::store::{self, Frames};
use std::io::Write;

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("omnish-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("stream.bin");
    std::fs::File::create(&path).unwrap().write_all(data).unwrap();
    let decoded = store::decode_entries(data);
    for length in [None, Some(data.len() as u64 / 2), Some(data.len() as u64)] {
        let mut frames = Frames::open(&path, 0, length).unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 97];
        'frames: while let Ok(Some(h)) = frames.next_header() {
            let mut payload = Vec::new();
            loop {
                match frames.read_payload(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => payload.extend_from_slice(&buf[..n]),
                    Err(_) => break 'frames,
                }
            }
            assert_eq!(payload.len() as u64, h.len);
            got.push(store::StreamEntry(h.timestamp_ms, h.direction, payload));
        }
        // Frames the streaming reader gives are the decoder's, in order. (The decoder also takes
        // bytes written as an array of integers, which no writer of stream.bin produces and the
        // streaming reader calls damage, so it may stop earlier.)
        assert!(decoded.starts_with(&got), "{got:?} vs {decoded:?}");
    }
});
