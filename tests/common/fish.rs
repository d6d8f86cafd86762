//! The two fish the fish tests run in: Debian bookworm's fish 3.6 (on PATH) and fish 4.0 (Debian
//! trixie's, which scripts/test-deps.sh installs under target/ and names in
//! `OMNISH_TEST_FISH4`, a directory holding its `fish`). A scenario written once takes a
//! [`Fish`] and runs its shells with [`Fish::path`] as PATH, so that `fish` (in `omnish wrap
//! fish`, a typed `fish`, `exec fish`) is that fish.

use std::path::Path;

/// Files that keep a new interactive fish from parsing every man page in the background at its
/// first start (an orphaned python that loads the machine for minutes after the test): one in
/// the directory of generated completions, where fish 3 looks (`~/.local/share/fish`) and
/// where fish 4 does (`~/.cache/fish`).
pub const NO_GENERATED: &[(&str, &str)] = &[
    (".local/share/fish/generated_completions/.omnish-test", ""),
    (".cache/fish/generated_completions/.omnish-test", ""),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fish {
    V3,
    V4,
}

impl Fish {
    /// Whether this fish is installed; when it is not, [`super::skip`] (which fails the test
    /// unless skipping was asked for) and false.
    pub fn available(self) -> bool {
        match self {
            Fish::V3 => super::require("fish"),
            Fish::V4 => {
                let ok = std::env::var("OMNISH_TEST_FISH4")
                    .is_ok_and(|dir| Path::new(&dir).join("fish").is_file());
                if !ok {
                    super::skip(
                        "fish 4 is not installed (OMNISH_TEST_FISH4, set by scripts/test-deps.sh)",
                    );
                }
                ok
            }
        }
    }

    /// The test's PATH, with fish 4's directory first for [`Fish::V4`].
    pub fn path(self) -> String {
        let path = std::env::var("PATH").unwrap_or_default();
        match self {
            Fish::V3 => path,
            Fish::V4 => format!(
                "{}:{path}",
                std::env::var("OMNISH_TEST_FISH4").unwrap_or_default()
            ),
        }
    }

    /// The major version (3 or 4), for what the two fish do differently.
    pub fn major(self) -> u32 {
        match self {
            Fish::V3 => 3,
            Fish::V4 => 4,
        }
    }
}

/// Tests that run each scenario named, in the fish named (`in_fish!(V4: a, b)` in a module whose
/// parent holds the scenarios `fn a(f: Fish)`, ...): the scenarios' own names are the tests'.
/// (Unused in the test binaries without fish scenarios, as the rest of `common` may be.)
#[allow(unused_macros)]
macro_rules! in_fish {
    ($fish:ident: $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                super::$name($crate::common::fish::Fish::$fish);
            }
        )*
    };
}
#[allow(unused_imports)]
pub(crate) use in_fish;
