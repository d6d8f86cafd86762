//! Derived caches beside a session: `sessions/<id>/cache/<seq>.digest`.
//!
//! A cache entry is derived from `stream.bin` and `commands.jsonl` and never the source of
//! truth: it holds the key it was made from (versions and inputs), and an entry whose key differs,
//! or that does not decode, is ignored and rebuilt. Entries are written atomically (a temp file
//! in the same directory, then a rename), 0600 in a 0700 directory, like everything in a session.
//! Removing the `cache` directory is always safe.

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Outputs whose frames take fewer bytes than this are cheap to render: not cached.
pub const MIN_CACHED_LENGTH: u64 = 1 << 20;

/// The directory of a session's caches.
pub fn dir(session_dir: &Path) -> PathBuf {
    session_dir.join("cache")
}

/// Which cache directory a session has (made first when `make`), if it is a directory: its
/// device, inode and change time. `omnish forget` removes the directory once it has destroyed
/// what it was asked to, so a value derived from what it destroyed is written only if the
/// identity taken before reading is still the one (a save racing the removal fails, or is
/// removed with the directory). The change time tells a directory removed and made again from
/// the old one where the inode is reused at once; an entry written into it meanwhile also
/// changes it, and the value is then derived again next time.
pub fn identity(session_dir: &Path, make: bool) -> Option<(u64, u64, i64, i64)> {
    use std::os::unix::fs::MetadataExt;
    let cache = dir(session_dir);
    if make {
        let _ = crate::store::create_store_dir(&cache);
    }
    let m = std::fs::symlink_metadata(&cache).ok()?;
    m.is_dir()
        .then(|| (m.dev(), m.ino(), m.ctime(), m.ctime_nsec()))
}

/// Where the cache entry of command `seq` lives.
pub fn path(session_dir: &Path, seq: u64) -> PathBuf {
    dir(session_dir).join(format!("{seq}.digest"))
}

/// The value cached at `path`, if its key equals `key`. An entry that is not a regular file or
/// is over [`crate::store::open::DIGEST_CAP`] is not read (and said once); the next
/// [`save`] replaces it.
pub fn load<K, V>(path: &Path, key: &K) -> Option<V>
where
    K: DeserializeOwned + PartialEq,
    V: DeserializeOwned,
{
    use crate::store::open;
    let bytes = match open::read_capped(path, open::DIGEST_CAP) {
        Ok(b) => b,
        Err(e) => {
            if open::is_refused(&e) {
                crate::store::notice::skipped(path, &e.to_string());
            }
            return None;
        }
    };
    let (stored, value): (K, V) = rmp_serde::from_slice(&bytes).ok()?;
    (stored == *key).then_some(value)
}

/// Caches `value` under `key` at `path`, atomically (what was at `path`, a link included, is
/// replaced, never written through). A `cache` directory that is a symbolic link is not
/// written to. An entry over [`crate::store::open::DIGEST_CAP`] is not written: it would not
/// be read.
pub fn save<K: Serialize, V: Serialize>(
    session_dir: &Path,
    path: &Path,
    key: &K,
    value: &V,
) -> io::Result<()> {
    let dir = dir(session_dir);
    crate::store::create_store_dir(&dir)?;
    let bytes = rmp_serde::to_vec(&(key, value)).map_err(io::Error::other)?;
    if bytes.len() as u64 > crate::store::open::DIGEST_CAP {
        return Err(io::Error::other("cache entry over its size limit"));
    }
    let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(&dir)?;
    tmp.write_all(&bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn entries_serve_only_their_own_key_and_are_private() {
        let tmp = tempfile::tempdir().unwrap();
        let p = path(tmp.path(), 7);
        save(tmp.path(), &p, &("v1", 10u64), &vec![1u32, 2, 3]).unwrap();
        assert_eq!(
            load::<(String, u64), Vec<u32>>(&p, &("v1".into(), 10)),
            Some(vec![1, 2, 3])
        );
        assert_eq!(
            load::<(String, u64), Vec<u32>>(&p, &("v2".into(), 10)),
            None
        );
        assert_eq!(
            load::<(String, u64), Vec<String>>(&p, &("v1".into(), 10)),
            None
        );
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&p), 0o600);
        assert_eq!(mode(&dir(tmp.path())), 0o700);
        std::fs::write(&p, b"garbage").unwrap();
        assert_eq!(
            load::<(String, u64), Vec<u32>>(&p, &("v1".into(), 10)),
            None
        );
    }
}
