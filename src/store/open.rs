//! The one way store files are opened: regular files only, never through a symbolic link at the
//! last component, never blocking, and read within a size cap.
//!
//! A store is only as trustworthy as whatever can write to it: a crash leaves a NUL tail, a
//! restore from a backup leaves a symbolic link, a mistake leaves a FIFO. So every reader opens
//! its file with `O_NOFOLLOW` (a symbolic link is refused, wherever it points), `O_NONBLOCK` (a
//! FIFO or a device does not hold the open) and `O_NOCTTY`, then checks with `fstat` on the open
//! descriptor (not on the path, which could change meanwhile) that it is a regular file. Files
//! read whole are read within a cap ([`read_capped`]): [`META_CAP`], [`NOTES_CAP`],
//! [`DIGEST_CAP`], [`TEXT_INDEX_CAP`]; `stream.bin` and `commands.jsonl` are streamed instead
//! ([`crate::store::Frames`], [`crate::store::commands`]), in memory that does not depend on
//! their size.
//!
//! Writers never write through a symbolic link either ([`create_new`], [`open_writable`],
//! `O_NOFOLLOW`), so a link planted in a session directory never makes omnish write elsewhere.
//! Files opened to read and write (locks, caches) must be regular files too; the recorder's
//! appends are not held to that: its writer thread is built to wait for a slow device, off the
//! terminal's path.
//!
//! A file refused here is an [`io::Error`] for which [`is_refused`] holds; its message says
//! why (`a FIFO, not a regular file`, `a symbolic link`, `2.1 GB, over its 16 MiB limit`).

use nix::fcntl::OFlag;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Most bytes of `meta.json`: it holds the running command's line (the recorder keeps at most
/// about 1 MiB of one), which JSON may escape to several times its size.
pub const META_CAP: u64 = 16 << 20;
/// Most bytes of `notes.json`.
pub const NOTES_CAP: u64 = 16 << 20;
/// Most bytes of a cached digest (`cache/<seq>.digest`): a digest keeps at most 768 lines of at
/// most 4,096 chars, 12 MiB at four bytes a char.
pub const DIGEST_CAP: u64 = 16 << 20;
/// Most bytes of the search text cache's index (`cache/text-*.idx`): 40 bytes a command, so
/// 1.6 million commands.
pub const TEXT_INDEX_CAP: u64 = 64 << 20;

/// Why a file was refused (the payload of the [`io::Error`]).
#[derive(Debug)]
struct Refused(String);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

fn refused(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, Refused(why))
}

/// Whether `e` says a file was refused: not a regular file, a symbolic link, over its cap.
pub fn is_refused(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<Refused>())
}

/// The flags every store file is opened with, besides the access mode.
fn flags() -> i32 {
    (OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY | OFlag::O_CLOEXEC).bits()
}

/// Turns the error of an `O_NOFOLLOW` open of a symbolic link into a refusal.
fn link_refused(e: io::Error) -> io::Error {
    if e.raw_os_error() == Some(nix::errno::Errno::ELOOP as i32) {
        refused("a symbolic link, not a regular file".to_string())
    } else {
        e
    }
}

/// `Ok` when the open `file` is a regular file; else a refusal naming what it is.
pub fn check_regular(file: &File) -> io::Result<()> {
    let t = file.metadata()?.file_type();
    if t.is_file() {
        return Ok(());
    }
    let what = if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_dir() {
        "a directory"
    } else {
        "not a file"
    };
    Err(refused(format!("{what}, not a regular file")))
}

/// Opens `path` for reading: a regular file, not through a symbolic link, without blocking.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags())
        .open(path)
        .map_err(link_refused)?;
    check_regular(&file)?;
    Ok(file)
}

/// The whole of the regular file `path`, refused when it holds more than `cap` bytes (checked
/// before reading, and again while reading, as a file may grow).
pub fn read_capped(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let size = file.metadata()?.len();
    if size > cap {
        return Err(too_large(size, cap));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_large(bytes.len() as u64, cap));
    }
    Ok(bytes)
}

fn too_large(size: u64, cap: u64) -> io::Error {
    refused(format!(
        "{} bytes, over its limit of {} MiB",
        size,
        cap >> 20
    ))
}

/// Opens `path` to append (`append`) or to read and write, creating it 0600, never through a
/// symbolic link. To read and write, only a regular file is opened (without blocking); an
/// append goes to whatever non-link is there, as the recorder's writer thread expects.
pub fn open_writable(path: &Path, append: bool) -> io::Result<File> {
    let mut o = OpenOptions::new();
    if append {
        let no_link = OFlag::O_NOFOLLOW | OFlag::O_NOCTTY | OFlag::O_CLOEXEC;
        o.append(true).custom_flags(no_link.bits());
    } else {
        o.read(true).write(true).custom_flags(flags());
    }
    let file = o
        .create(true)
        .mode(0o600)
        .open(path)
        .map_err(link_refused)?;
    if !append {
        check_regular(&file)?;
    }
    Ok(file)
}

/// Creates `path` 0600 for writing; it must not exist (whatever is there, a symbolic link
/// included, makes this fail).
pub fn create_new(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(flags())
        .open(path)
}

/// Opens the directory `dir` (not through a symbolic link, without blocking), for a lock or to
/// check what it is.
pub fn open_dir(dir: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(flags() | OFlag::O_DIRECTORY.bits())
        .open(dir)
        .map_err(|e| {
            // With O_DIRECTORY, a link is ENOTDIR rather than ELOOP.
            if e.raw_os_error() == Some(nix::errno::Errno::ENOTDIR as i32) {
                let link = std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_symlink());
                refused(if link {
                    "a symbolic link, not a directory".to_string()
                } else {
                    "not a directory".to_string()
                })
            } else {
                link_refused(e)
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn fifo(path: &Path) {
        nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).unwrap();
    }

    #[test]
    fn only_regular_files_are_opened() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::write(d.join("file"), b"abc").unwrap();
        assert_eq!(read_capped(&d.join("file"), 3).unwrap(), b"abc");
        let e = read_capped(&d.join("file"), 2).unwrap_err();
        assert!(is_refused(&e) && e.to_string().contains("3 bytes"), "{e}");
        // A FIFO with no writer would block a plain open for ever.
        fifo(&d.join("fifo"));
        let e = open_regular(&d.join("fifo")).unwrap_err();
        assert!(is_refused(&e), "{e}");
        assert_eq!(e.to_string(), "a FIFO, not a regular file");
        symlink("/dev/zero", d.join("zero")).unwrap();
        let e = read_capped(&d.join("zero"), 100).unwrap_err();
        assert!(
            is_refused(&e) && e.to_string().contains("symbolic link"),
            "{e}"
        );
        // A link to a regular file is refused too: the store holds no links.
        symlink(d.join("file"), d.join("link")).unwrap();
        assert!(is_refused(&open_regular(&d.join("link")).unwrap_err()));
        let e = open_regular(d).unwrap_err();
        assert_eq!(e.to_string(), "a directory, not a regular file");
        let missing = open_regular(&d.join("none")).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        assert!(!is_refused(&missing));
    }

    #[test]
    fn writers_never_follow_a_planted_link() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::write(d.join("victim"), b"keep").unwrap();
        symlink(d.join("victim"), d.join("planted")).unwrap();
        assert!(is_refused(
            &open_writable(&d.join("planted"), true).unwrap_err()
        ));
        assert!(is_refused(
            &open_writable(&d.join("planted"), false).unwrap_err()
        ));
        assert!(create_new(&d.join("planted")).is_err());
        fifo(&d.join("fifo"));
        assert!(is_refused(
            &open_writable(&d.join("fifo"), false).unwrap_err()
        ));
        assert_eq!(std::fs::read(d.join("victim")).unwrap(), b"keep");
        symlink(d, d.join("dirlink")).unwrap();
        assert!(is_refused(&open_dir(&d.join("dirlink")).unwrap_err()));
        assert!(open_dir(d).is_ok());
    }
}
