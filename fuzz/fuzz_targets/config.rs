//! The config loader on arbitrary config files and environment values: it never panics, takes
//! bounded time and memory, and gives either a config or one error of one line naming the
//! file and line, the key or the variable; the lenient load of `omnish wrap` never fails, and
//! has problems exactly when the strict one fails (see `omnish::fuzz_config`).
//!
//! Input: lines before the first NUL are environment values, each a variable chosen by its
//! first byte from the ones omnish reads, then its value; the rest is the file.
#![no_main]

use libfuzzer_sys::fuzz_target;

const VARS: &[&str] = &[
    "OMNISH_ASK_COMMAND",
    "OMNISH_ASK_SHELL",
    "OMNISH_ASK_MODEL",
    "OMNISH_KEYS_ASK",
    "OMNISH_KEYS_FIX",
    "OMNISH_CONTEXT_RECENT",
    "OMNISH_CONTEXT_MAX_LINES",
    "OMNISH_CONTEXT_MAX_LINE_WIDTH",
    "OMNISH_CONTEXT_FORMAT",
    "OMNISH_CONTEXT_REDACT",
    "OMNISH_ENV_ALLOW",
    "OMNISH_ENV_DENY",
    "OMNISH_FILES_COLLAPSE",
    "OMNISH_FILES_MAX_LINES",
    "OMNISH_LOOPS_THRESHOLD",
    "OMNISH_SESSIONS_KEEP",
    "OMNISH_SESSIONS_MAX_SIZE",
    "OMNISH_DATA_DIR",
    "OMNISH_RECORD_PRIVATE",
];

fuzz_target!(|data: &[u8]| {
    let (env_part, file) = match data.iter().position(|&b| b == 0) {
        Some(nul) => (&data[..nul], &data[nul + 1..]),
        None => (&[][..], data),
    };
    let env: Vec<(String, String)> = env_part
        .split(|&b| b == b'\n')
        .filter_map(|line| {
            let (&which, value) = line.split_first()?;
            let var = VARS[usize::from(which) % VARS.len()];
            Some((var.to_string(), String::from_utf8_lossy(value).into_owned()))
        })
        .collect();
    omnish::fuzz_config(file, &env);
});
