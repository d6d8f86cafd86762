//! The commands readers on arbitrary `commands.jsonl` bytes: reading backwards (newest first, in
//! blocks) finds exactly the records reading forwards finds, in reverse, and never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use omnish::store::{self, RecordsBackwards};
use std::io::Write;

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("omnish-fuzz-cmd-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    std::fs::File::create(dir.join(store::COMMANDS))
        .unwrap()
        .write_all(data)
        .unwrap();
    let forwards = store::read_commands(&dir).unwrap();
    let mut scan = RecordsBackwards::open(&dir.join(store::COMMANDS)).unwrap();
    let mut backwards: Vec<_> = std::iter::from_fn(|| scan.next_record()).collect();
    backwards.reverse();
    assert_eq!(forwards, backwards);
});
