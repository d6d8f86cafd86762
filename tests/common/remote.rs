//! Other users, hosts and containers, for the tests of shells started through `ssh`, `sudo`,
//! `su` and `docker exec` (issue 16): a throwaway local user ([`TestUser`]), an OpenSSH server
//! on a loopback port with throwaway keys ([`Sshd`]) and a stand-in for `docker exec`
//! ([`fake_container_bin`]). They need root (to add users, start sshd, make namespaces): where
//! that or a program is missing they go through [`skip`], which fails the test unless
//! `OMNISH_ALLOW_SKIP=1`, and give None.

use super::{Harness, Proc, TIMEOUT, all_processes, skip};
use std::ffi::OsStr;
use std::fs::Permissions;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The `docker exec` stand-in (a POSIX sh script, checked by tests/shell_scripts.rs).
const FAKE_DOCKER: &str = include_str!("../fixtures/fake-docker.sh");
const FAKE_KUBECTL: &str = include_str!("../fixtures/fake-kubectl.sh");

/// Serialises this process's changes to the user database (the tests of a file run in parallel
/// threads); another process holding its lock is met by retrying.
static ACCOUNTS: Mutex<()> = Mutex::new(());

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// `name` on PATH, else in /usr/sbin or /sbin (root's programs are not on every PATH).
fn program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|dir| dir.join(name))
        .find(|p| {
            p.is_absolute()
                && p.metadata()
                    .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// [`program`], else [`skip`] and None.
fn program_or_skip(name: &str, package: &str) -> Option<PathBuf> {
    let found = program(name);
    if found.is_none() {
        skip(&format!(
            "{name} is not installed (Debian package {package})"
        ));
    }
    found
}

fn root_or_skip(what: &str) -> bool {
    if !is_root() {
        skip(&format!("{what} needs root"));
    }
    is_root()
}

/// `omt` and 8 random lowercase letters or digits: a user name no real account has.
fn random_name() -> String {
    const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).unwrap();
    let tail: String = bytes
        .iter()
        .map(|b| ALNUM[*b as usize % ALNUM.len()] as char)
        .collect();
    format!("omt{tail}")
}

/// A uid for a test user: random among 20000..60000, above the users a machine has (Debian
/// starts at 1000) and below login.defs' UID_MAX.
fn random_uid() -> u32 {
    let mut bytes = [0u8; 4];
    getrandom::fill(&mut bytes).unwrap();
    20_000 + u32::from_le_bytes(bytes) % 40_000
}

/// The owners of the files under /tmp, /var/tmp, /dev/shm and /run/user.
fn owners_of_temporary_files() -> std::collections::HashSet<u32> {
    let mut owners = std::collections::HashSet::new();
    for root in TEMPORARY_DIRS.iter().chain(&["/run/user"]) {
        walk(Path::new(root), &|_| true, &mut |_, meta| {
            owners.insert(meta.uid());
        });
    }
    owners
}

/// Where a user's processes leave files outside its home (and /run/user/UID).
const TEMPORARY_DIRS: [&str; 3] = ["/tmp", "/var/tmp", "/dev/shm"];

/// Runs useradd or userdel, again while another process holds the lock on the user database
/// ("cannot lock /etc/passwd; try again later").
fn account_tool(tool: &Path, args: &[&OsStr]) -> std::process::Output {
    let _serial = ACCOUNTS.lock().unwrap_or_else(|e| e.into_inner());
    let start = Instant::now();
    loop {
        let out = Command::new(tool)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let locked = String::from_utf8_lossy(&out.stderr).contains("cannot lock");
        if out.status.success() || !locked || start.elapsed() > TIMEOUT {
            return out;
        }
        // A retry after a failure, not a wait for state: the lock's holder says nothing.
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The real and effective uid of process `pid`, if it still exists.
fn uids_of(pid: i32) -> Option<(u32, u32)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("Uid:"))?;
    let mut ids = line.split_whitespace().map(|w| w.parse().ok());
    Some((ids.next()??, ids.next()??))
}

/// Calls `found` for every entry under `dir` (not `dir` itself), without following symbolic
/// links, and goes into the directories for which `enter` holds. Entries that vanish meanwhile
/// (other tests run) are left out.
fn walk(
    dir: &Path,
    enter: &dyn Fn(&Path) -> bool,
    found: &mut dyn FnMut(&Path, &std::fs::Metadata),
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        found(&path, &meta);
        if meta.is_dir() && enter(&path) {
            walk(&path, enter, found);
        }
    }
}

/// A fresh local user, deleted with its home (and whatever it left in the temporary dirs) on
/// drop. Its home, in a temporary dir of its own, holds only what useradd copies from
/// /etc/skel: nothing of omnish.
pub struct TestUser {
    pub name: String,
    pub home: PathBuf,
    pub uid: u32,
    pub gid: u32,
    /// Its login shell, as given: "/bin/bash", "/usr/bin/zsh", "/bin/sh".
    pub shell: String,
    /// Holds the home; 0755, so that the user reaches it. Removed after the user.
    _dir: tempfile::TempDir,
}

impl TestUser {
    /// Adds a user (`useradd`) with login shell `shell`. None, through [`skip`], when not root,
    /// without useradd, or when `shell` is not installed. Safe in parallel tests.
    pub fn create(shell: &str) -> Option<TestUser> {
        if !root_or_skip("adding a user") {
            return None;
        }
        let useradd = program_or_skip("useradd", "passwd")?;
        if !Path::new(shell).is_file() {
            skip(&format!("{shell} is not installed"));
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix("omnish-user-")
            .tempdir()
            .unwrap();
        std::fs::set_permissions(dir.path(), Permissions::from_mode(0o755)).unwrap();
        // A random uid, none of whose files lie in the temporary dirs: a uid is free again once
        // its user is deleted, and a file an earlier user left (a test that failed, a test of
        // another run) would be taken for this one's in files().
        let owners = owners_of_temporary_files();
        for _ in 0..20 {
            let uid = random_uid();
            if owners.contains(&uid) {
                continue;
            }
            let name = random_name();
            let home = dir.path().join(&name);
            let uid_text = uid.to_string();
            // Password "*": no password matches it, but the account is not locked. useradd's
            // default, "!", is a locked account, which sshd refuses without PAM even for a key.
            let out = account_tool(
                &useradd,
                &[
                    OsStr::new("--create-home"),
                    OsStr::new("--home-dir"),
                    home.as_os_str(),
                    OsStr::new("--shell"),
                    OsStr::new(shell),
                    OsStr::new("--password"),
                    OsStr::new("*"),
                    OsStr::new("--uid"),
                    OsStr::new(&uid_text),
                    OsStr::new("--user-group"),
                    // Nothing in lastlog and faillog for it.
                    OsStr::new("--no-log-init"),
                    OsStr::new(&name),
                ],
            );
            // 4: the uid is taken; 9: the name is (by another test's user, in parallel).
            if matches!(out.status.code(), Some(4 | 9)) {
                continue;
            }
            assert!(
                out.status.success(),
                "useradd {name}: {:?}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            let entry = nix::unistd::User::from_name(&name)
                .unwrap()
                .unwrap_or_else(|| panic!("useradd {name} made no passwd entry"));
            assert_eq!(entry.uid.as_raw(), uid);
            return Some(TestUser {
                uid,
                gid: entry.gid.as_raw(),
                name,
                home,
                shell: shell.to_string(),
                _dir: dir,
            });
        }
        panic!("useradd: twenty random uids and names were all taken");
    }

    /// As [`TestUser::create`], with the directories of fish's generated completions made in
    /// the home, the user's (without them, a first fish parses every man page in the
    /// background: [`super::fish::NO_GENERATED`]).
    pub fn create_for_fish(shell: &str) -> Option<TestUser> {
        let user = TestUser::create(shell)?;
        for (file, _) in super::fish::NO_GENERATED {
            let generated = Path::new(file).parent().unwrap();
            std::fs::create_dir_all(user.home.join(generated)).unwrap();
            for d in generated.ancestors().filter(|d| !d.as_os_str().is_empty()) {
                std::os::unix::fs::chown(user.home.join(d), Some(user.uid), Some(user.gid))
                    .unwrap();
            }
        }
        Some(user)
    }

    /// Asserts that each of `records` ran as this user on `host`, in a shell `depth` deep whose
    /// own record's command id is `nested_in`.
    pub fn assert_ran_here(
        &self,
        records: &[&omnish::store::CommandRecord],
        depth: u32,
        nested_in: &str,
        host: Option<&str>,
    ) {
        for r in records {
            assert_eq!(r.depth, depth, "{r:?}");
            assert_eq!(r.nested_in.as_deref(), Some(nested_in), "{r:?}");
            assert_eq!(r.user.as_deref(), Some(self.name.as_str()), "{r:?}");
            assert_eq!(r.host.as_deref(), host, "{r:?}");
        }
    }

    /// Asserts that nothing of omnish's is left on the far side: the home holds /etc/skel and
    /// `kept` (names in the home, each with all below it: what the shells keep, their history),
    /// and no file of the user's is in the temporary directories (but fish's universal
    /// variables' notifier, /tmp/fish.USER, which fish leaves without omnish too).
    pub fn assert_nothing_left(&self, kept: &[&str]) {
        let mut allowed: Vec<String> = std::fs::read_dir("/etc/skel")
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        allowed.extend(kept.iter().map(|k| k.to_string()));
        let left: Vec<String> = self
            .files()
            .into_iter()
            .filter(|f| !f.starts_with("/tmp/fish."))
            .filter(|f| {
                !allowed
                    .iter()
                    .any(|a| f == a || f.starts_with(&format!("{a}/")))
            })
            .collect();
        assert!(left.is_empty(), "left on the far side: {left:?}");
    }

    /// What the user has on this machine, for "nothing is left" checks: every path under its
    /// home (relative to it, directories too), and every file or directory it owns under
    /// /tmp, /var/tmp, /dev/shm and /run/user/UID (absolute); sorted.
    pub fn files(&self) -> Vec<String> {
        let mut files = Vec::new();
        walk(&self.home, &|_| true, &mut |path, _| {
            files.push(
                path.strip_prefix(&self.home)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            );
        });
        let run = PathBuf::from(format!("/run/user/{}", self.uid));
        if std::fs::symlink_metadata(&run).is_ok_and(|m| m.uid() == self.uid) {
            files.push(run.display().to_string());
        }
        for root in TEMPORARY_DIRS.iter().map(Path::new).chain([run.as_path()]) {
            walk(root, &|dir| dir != self.home, &mut |path, meta| {
                if meta.uid() == self.uid && !path.starts_with(&self.home) {
                    files.push(path.display().to_string());
                }
            });
        }
        files.sort();
        files
    }

    /// The processes running as the user (real or effective uid).
    pub fn processes(&self) -> Vec<Proc> {
        all_processes()
            .into_iter()
            .filter(|p| uids_of(p.pid).is_some_and(|(r, e)| r == self.uid || e == self.uid))
            .collect()
    }

    /// Waits until a shell of the user named `comm` ("bash", "zsh") waits for keys at its line
    /// editor: in the foreground of its terminal (the recorded one, or the one sshd or sudo
    /// made), asleep reading it, the terminal neither canonical nor echoing. What is typed next
    /// is its input. The screen shows on a timeout.
    pub fn wait_line_editor(&self, h: &Harness, comm: &str) -> Proc {
        let mut found = None;
        h.wait_until(
            &format!("{comm} of {} at its line editor", self.name),
            || {
                found = self.processes().into_iter().find(|p| {
                    p.comm == comm && p.foreground() && p.waiting_for_input() && line_editing(p.pid)
                });
                found.is_some()
            },
        );
        found.unwrap()
    }

    /// A zsh whose home has no startup file starts `zsh-newuser-install`, which takes the
    /// first key: waits for its question on the screen (after `mark`, see [`Harness::mark`]),
    /// answers `q` (do nothing, ask again next time) and waits until it has read it.
    pub fn answer_zsh_newuser(&self, h: &mut Harness, mark: usize) {
        const QUESTION: &str = "--- Type one of the keys in parentheses --- ";
        h.wait_until("zsh-newuser-install's question", || {
            h.screen_since(mark).contains(QUESTION)
        });
        h.send(b"q");
        h.wait_until("zsh-newuser-install to take q", || {
            h.screen_since(mark).contains(&format!("{QUESTION}q"))
        });
    }

    /// Ends every process of the user (a session a test left open) and waits, a while, until
    /// none is left: userdel refuses a user that runs one.
    fn end_processes(&self) {
        let start = Instant::now();
        loop {
            let left: Vec<Proc> = self
                .processes()
                .into_iter()
                .filter(|p| p.state != 'Z')
                .collect();
            if left.is_empty() || start.elapsed() > Duration::from_secs(5) {
                return;
            }
            for p in &left {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(p.pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for TestUser {
    fn drop(&mut self) {
        self.end_processes();
        // What it left in the temporary dirs (the home goes with the user).
        for path in self.files().iter().rev().filter(|f| f.starts_with('/')) {
            let path = Path::new(path);
            let _ = if path.is_dir() {
                std::fs::remove_dir_all(path)
            } else {
                std::fs::remove_file(path)
            };
        }
        if let Some(userdel) = program("userdel") {
            let _ = account_tool(&userdel, &[OsStr::new("--remove"), OsStr::new(&self.name)]);
        }
    }
}

/// Whether the terminal of process `pid` (its stdin) is neither canonical nor echoing: a line
/// editor reads it key by key.
fn line_editing(pid: i32) -> bool {
    use nix::sys::termios::LocalFlags;
    let Ok(tty) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(format!("/proc/{pid}/fd/0"))
    else {
        return false;
    };
    nix::sys::termios::tcgetattr(&tty).is_ok_and(|t| {
        !t.local_flags
            .intersects(LocalFlags::ICANON | LocalFlags::ECHO)
    })
}

/// A free TCP port on 127.0.0.1 (free when asked: [`Sshd::start`] tries another when sshd
/// finds it taken).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Writes `text` to a new file `path` with mode `mode`.
fn write_file(path: &Path, text: &str, mode: u32) {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    file.write_all(text.as_bytes()).unwrap();
}

/// Appends `text` to `path`, making it with mode `mode` if missing.
fn append_file(path: &Path, text: &str, mode: u32) {
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(mode)
        .open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    file.write_all(text.as_bytes()).unwrap();
}

fn keygen(keygen: &Path, file: &Path, comment: &str) {
    let out = Command::new(keygen)
        .args(["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f"])
        .arg(file)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ssh-keygen: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// An OpenSSH server on 127.0.0.1 and a free port, run as root in the foreground (`sshd -D -e`)
/// with a throwaway ed25519 host key, letting in exactly the given users with a throwaway
/// client key (no passphrase), and nothing else: no password, no PAM, no environment accepted.
/// Killed, with its connections and files, on drop.
pub struct Sshd {
    pub port: u16,
    /// Its files: sshd_config, the host key, `authorized/<user>`, the client key, `sshd.log`
    /// (what sshd says, `-e`).
    pub dir: tempfile::TempDir,
    /// The client key's private half; its public half is each user's only authorized key.
    pub client_key: PathBuf,
    /// The host key as a known_hosts line: `[127.0.0.1]:PORT ssh-ed25519 AAAA...`.
    pub known_host: String,
    users: Vec<String>,
    child: std::process::Child,
    /// The system config's drop-ins written by [`Sshd::client_config`], removed on drop.
    drop_ins: Mutex<Vec<PathBuf>>,
}

impl Sshd {
    /// A server for `users`. None, through [`skip`], when not root or without sshd,
    /// ssh-keygen or ssh.
    pub fn start(users: &[&TestUser]) -> Option<Sshd> {
        Self::start_with(users, "")
    }

    /// [`Sshd::start`] with `extra` lines at the end of its sshd_config, for instance
    /// `"Match User NAME\n    ForceCommand echo forced\n"`.
    pub fn start_with(users: &[&TestUser], extra: &str) -> Option<Sshd> {
        assert!(!users.is_empty(), "an sshd for no user");
        if !root_or_skip("running sshd") {
            return None;
        }
        let sshd = program_or_skip("sshd", "openssh-server")?;
        let ssh_keygen = program_or_skip("ssh-keygen", "openssh-client")?;
        program_or_skip("ssh", "openssh-client")?;
        let dir = tempfile::Builder::new()
            .prefix("omnish-sshd-")
            .tempdir()
            .unwrap();
        // sshd reads an authorized keys file as its user: the users reach theirs.
        std::fs::set_permissions(dir.path(), Permissions::from_mode(0o755)).unwrap();
        let host_key = dir.path().join("host_ed25519");
        keygen(&ssh_keygen, &host_key, "omnish-test-host");
        let client_key = dir.path().join("client_ed25519");
        keygen(&ssh_keygen, &client_key, "omnish-test-client");
        let client_pub = std::fs::read_to_string(client_key.with_extension("pub")).unwrap();
        let authorized = dir.path().join("authorized");
        std::fs::create_dir(&authorized).unwrap();
        std::fs::set_permissions(&authorized, Permissions::from_mode(0o755)).unwrap();
        for user in users {
            write_file(&authorized.join(&user.name), &client_pub, 0o644);
        }
        // The privilege separation dir, as the package's service would make it.
        let privsep = Path::new("/run/sshd");
        if !privsep.exists() {
            std::fs::create_dir_all(privsep).unwrap();
            std::fs::set_permissions(privsep, Permissions::from_mode(0o755)).unwrap();
        }
        let host_pub = std::fs::read_to_string(host_key.with_extension("pub")).unwrap();
        let host_pub: Vec<&str> = host_pub.split_whitespace().take(2).collect();
        let names: Vec<String> = users.iter().map(|u| u.name.clone()).collect();
        let config = dir.path().join("sshd_config");
        let log = dir.path().join("sshd.log");
        for attempt in 1.. {
            let port = free_port();
            let text = format!(
                "# A throwaway server for omnish's tests (tests/common/remote.rs).\n\
                 ListenAddress 127.0.0.1:{port}\n\
                 AddressFamily inet\n\
                 HostKey \"{host_key}\"\n\
                 PidFile none\n\
                 AuthorizedKeysFile \"{authorized}/%u\"\n\
                 StrictModes no\n\
                 PubkeyAuthentication yes\n\
                 PasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\n\
                 UsePAM no\n\
                 PrintMotd no\n\
                 PrintLastLog no\n\
                 UseDNS no\n\
                 AllowUsers {names}\n\
                 {extra}\n",
                host_key = host_key.display(),
                authorized = authorized.display(),
                names = names.join(" "),
            );
            let _ = std::fs::remove_file(&config);
            write_file(&config, &text, 0o644);
            let _ = std::fs::remove_file(&log);
            let stderr = std::fs::File::create(&log).unwrap();
            let mut child = Command::new(&sshd)
                .args(["-D", "-e", "-f"])
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(stderr)
                .spawn()
                .unwrap();
            let start = Instant::now();
            loop {
                if let Some(status) = child.try_wait().unwrap() {
                    let said = std::fs::read_to_string(&log).unwrap_or_default();
                    if said.contains("Address already in use") && attempt < 5 {
                        break; // taken since free_port: another port
                    }
                    panic!("sshd exited ({status}) before it listened on port {port}:\n{said}");
                }
                let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
                if std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_ok() {
                    return Some(Sshd {
                        port,
                        dir,
                        client_key,
                        known_host: format!("[127.0.0.1]:{port} {}\n", host_pub.join(" ")),
                        users: names,
                        child,
                        drop_ins: Mutex::new(Vec::new()),
                    });
                }
                if start.elapsed() > TIMEOUT {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!(
                        "sshd did not listen on port {port} within {TIMEOUT:?}:\n{}",
                        std::fs::read_to_string(&log).unwrap_or_default()
                    );
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        unreachable!()
    }

    /// What sshd said so far (`-e`: its log on stderr).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    /// Makes `ssh USER` work for each of its users from a shell whose HOME is `home`:
    /// `home/.ssh/config` (0600, in a 0700 dir) gets a `Host USER` for each (HostName
    /// 127.0.0.1, this Port and User, the client key copied to `home/.ssh/` as IdentityFile,
    /// `home/.ssh/known_hosts` holding the host key, StrictHostKeyChecking yes, BatchMode yes,
    /// LogLevel ERROR).
    ///
    /// ssh reads `~/.ssh/config` from the home in the passwd entry, not `$HOME`: so that the
    /// recorded shell's `ssh USER` finds these aliases as a user's ssh would, a drop-in of the
    /// system config (`/etc/ssh/ssh_config.d/omnish-test-PORT-N.conf`) includes this file while
    /// the server runs. Checked with `ssh -G`.
    pub fn client_config(&self, home: &Path) {
        let ssh_dir = home.join(".ssh");
        std::fs::create_dir_all(&ssh_dir).unwrap();
        std::fs::set_permissions(&ssh_dir, Permissions::from_mode(0o700)).unwrap();
        let key = ssh_dir.join(format!("omnish_test_{}_ed25519", self.port));
        if !key.exists() {
            let private = std::fs::read_to_string(&self.client_key).unwrap();
            write_file(&key, &private, 0o600);
        }
        let known_hosts = ssh_dir.join("known_hosts");
        append_file(&known_hosts, &self.known_host, 0o600);
        let config = ssh_dir.join("config");
        let mut text = String::new();
        for user in &self.users {
            text.push_str(&format!(
                "Host {user}\n    HostName 127.0.0.1\n    Port {port}\n    User {user}\n    \
                 IdentityFile \"{key}\"\n    IdentitiesOnly yes\n    \
                 UserKnownHostsFile \"{known_hosts}\"\n    StrictHostKeyChecking yes\n    \
                 UpdateHostKeys no\n    BatchMode yes\n    LogLevel ERROR\n",
                port = self.port,
                key = key.display(),
                known_hosts = known_hosts.display(),
            ));
        }
        append_file(&config, &text, 0o600);
        std::fs::set_permissions(&config, Permissions::from_mode(0o600)).unwrap();
        let drop_ins = Path::new("/etc/ssh/ssh_config.d");
        std::fs::create_dir_all(drop_ins).unwrap();
        let mut written = self.drop_ins.lock().unwrap();
        let drop_in = drop_ins.join(format!("omnish-test-{}-{}.conf", self.port, written.len()));
        let _ = std::fs::remove_file(&drop_in);
        write_file(
            &drop_in,
            &format!(
                "# omnish's tests, while their sshd on port {} runs (tests/common/remote.rs)\n\
                 Include \"{}\"\n",
                self.port,
                config.display()
            ),
            0o644,
        );
        written.push(drop_in);
        drop(written);
        for user in &self.users {
            let out = Command::new("ssh")
                .args(["-G", user])
                .env("HOME", home)
                .stdin(Stdio::null())
                .output()
                .unwrap();
            let resolved = String::from_utf8_lossy(&out.stdout);
            assert!(
                resolved.contains(&format!("\nport {}\n", self.port)),
                "`ssh {user}` does not reach the test server: /etc/ssh/ssh_config must include \
                 /etc/ssh/ssh_config.d/*.conf (Debian's does); ssh -G says:\n{resolved}{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        // Its connections first: each a child of the listener, in a session of its own.
        let listener = self.child.id() as i32;
        for p in all_processes().into_iter().filter(|p| p.ppid == listener) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(p.pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        for drop_in in self.drop_ins.lock().unwrap().drain(..) {
            let _ = std::fs::remove_file(drop_in);
        }
    }
}

/// Writes `dir/docker`, a stand-in for `docker exec` (tests/fixtures/fake-docker.sh): the test
/// puts `dir` first on the recorded shell's PATH. `docker exec [-i] [-t] [-it] [-u USER]
/// [-w DIR] [-e K=V]... CONTAINER CMD [ARGS...]` runs CMD as USER (default root) with USER's
/// HOME, USER, LOGNAME and SHELL, PATH and TERM kept, in DIR (default the home), in a new UTS
/// namespace whose hostname is CONTAINER, on the same terminal; anything else is an error,
/// status 125. Beside it `dir/kubectl` (tests/fixtures/fake-kubectl.sh): `kubectl exec -it
/// [-n NS] [-c C] POD -- CMD [ARGS...]` runs CMD through it in POD as the user named by
/// `OMNISH_TEST_POD_USER`. None, through [`skip`], when not root, without unshare or setpriv,
/// or where a UTS namespace cannot be made.
pub fn fake_container_bin(dir: &Path) -> Option<PathBuf> {
    if !root_or_skip("the docker exec stand-in") {
        return None;
    }
    let unshare = program_or_skip("unshare", "util-linux")?;
    program_or_skip("setpriv", "util-linux")?;
    let uts = Command::new(unshare)
        .args(["--uts", "true"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    if !uts.status.success() {
        skip(&format!(
            "no UTS namespace here (unshare --uts: {})",
            String::from_utf8_lossy(&uts.stderr).trim()
        ));
        return None;
    }
    std::fs::create_dir_all(dir).unwrap();
    let docker = dir.join("docker");
    let _ = std::fs::remove_file(&docker);
    write_file(&docker, FAKE_DOCKER, 0o755);
    let kubectl = dir.join("kubectl");
    let _ = std::fs::remove_file(&kubectl);
    write_file(&kubectl, FAKE_KUBECTL, 0o755);
    Some(docker)
}
