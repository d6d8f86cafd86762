//! A real container for the nesting tests: podman (Debian's package) runs an image made here
//! from this machine's own programs (bash, dash and the few tools a login and omnish's bootstrap
//! use, with the libraries they load), so that nothing is fetched from a registry. Its
//! configuration and storage live in a temporary directory the environment names
//! ([`Podman::env`]): the machine's own podman store is not touched. This machine runs podman
//! with runc, cgroupfs and lowered limits (cgroups in hybrid mode, which crun refuses; no
//! CAP_SYS_RESOURCE to raise a limit), which the configuration sets.

use super::remote::TestUser;
use super::skip;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The programs the image holds (from this machine, with their libraries).
const PROGRAMS: [&str; 16] = [
    "bash", "sh", "stty", "head", "sed", "cut", "mktemp", "rm", "cat", "whoami", "sleep", "ls",
    "od", "id", "env", "mkdir",
];

/// A container named `name` (and with that host name) running an image of this machine's
/// programs, where `user` exists with their uid and home (mounted); removed when dropped.
pub struct Podman {
    pub name: String,
    dir: tempfile::TempDir,
}

impl Podman {
    /// None, through [`skip`], when podman or runc is not installed, when not root, or when
    /// podman cannot run a container here.
    pub fn start(name: &str, user: &TestUser) -> Option<Podman> {
        for (program, package) in [("podman", "podman"), ("runc", "runc")] {
            if which(program).is_none() {
                skip(&format!(
                    "{program} is not installed (Debian package {package})"
                ));
                return None;
            }
        }
        let dir = tempfile::Builder::new()
            .prefix("omnish-podman-")
            .tempdir()
            .unwrap();
        let podman = Podman {
            name: name.to_string(),
            dir,
        };
        let root = podman.dir.path().join("rootfs");
        make_rootfs(&root, user);
        std::fs::write(
            podman.dir.path().join("containers.conf"),
            "[containers]\ndefault_ulimits = [\"nofile=1024:1024\", \"nproc=1024:1024\"]\n\
             [engine]\ncgroup_manager = \"cgroupfs\"\nruntime = \"runc\"\nevents_logger = \"file\"\n",
        )
        .unwrap();
        std::fs::write(
            podman.dir.path().join("storage.conf"),
            format!(
                "[storage]\ndriver = \"vfs\"\ngraphroot = \"{0}/graph\"\nrunroot = \"{0}/run\"\n",
                podman.dir.path().display()
            ),
        )
        .unwrap();
        let tar = podman.dir.path().join("rootfs.tar");
        let packed = Command::new("tar")
            .arg("-C")
            .arg(&root)
            .arg("-cf")
            .arg(&tar)
            .arg(".")
            .status()
            .unwrap();
        assert!(packed.success(), "tar of the image");
        let image = format!("localhost/omnish-test-{name}:1");
        podman.run(&["import".as_ref(), tar.as_os_str(), image.as_ref()])?;
        let home = user.home.to_string_lossy();
        let volume = format!("{home}:{home}");
        podman.run(&[
            "run",
            "-d",
            "--name",
            name,
            "--hostname",
            name,
            "-v",
            &volume,
            &image,
            "sleep",
            "600",
        ])?;
        Some(podman)
    }

    /// What podman reads to use this container's configuration and storage.
    pub fn env(&self) -> Vec<(String, String)> {
        let conf = |f: &str| self.dir.path().join(f).to_string_lossy().into_owned();
        vec![
            ("CONTAINERS_CONF".into(), conf("containers.conf")),
            ("CONTAINERS_STORAGE_CONF".into(), conf("storage.conf")),
        ]
    }

    /// What `podman exec NAME ARGS...` prints, as `user` (a name in the image).
    pub fn exec(&self, user: &str, args: &[&str]) -> String {
        let mut all = vec!["exec", "-u", user, self.name.as_str()];
        all.extend_from_slice(args);
        let out = self
            .command(&all)
            .stderr(Stdio::inherit())
            .output()
            .unwrap();
        assert!(out.status.success(), "podman exec {args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn command<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Command {
        let mut cmd = Command::new("podman");
        cmd.args(args).envs(self.env()).stdin(Stdio::null());
        cmd
    }

    /// Runs podman; None, through [`skip`], when it fails (podman cannot run containers here).
    fn run<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Option<()> {
        let out = self.command(args).output().unwrap();
        if !out.status.success() {
            let shown: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy()).collect();
            skip(&format!(
                "podman cannot run a container here (podman {}: {})",
                shown.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
            return None;
        }
        Some(())
    }
}

impl Drop for Podman {
    fn drop(&mut self) {
        let _ = self
            .command(&["rm", "-f", "-t", "0", self.name.as_str()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        // vfs keeps the layers under the temporary directory, which goes with `dir`.
    }
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}

/// This machine's programs in PROGRAMS with every library they load, a passwd and group with
/// root and `user`, and empty /tmp and /root.
fn make_rootfs(root: &Path, user: &TestUser) {
    for d in ["bin", "etc", "tmp", "root", "dev", "proc", "sys"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::set_permissions(
        root.join("tmp"),
        std::os::unix::fs::PermissionsExt::from_mode(0o1777),
    )
    .unwrap();
    let mut files: Vec<PathBuf> = Vec::new();
    for p in PROGRAMS {
        let path = which(p).unwrap_or_else(|| panic!("{p} is not on PATH"));
        let path = std::fs::canonicalize(&path).unwrap();
        std::fs::copy(&path, root.join("bin").join(p)).unwrap();
        let ldd = Command::new("ldd").arg(&path).output().unwrap();
        for word in String::from_utf8_lossy(&ldd.stdout).split_whitespace() {
            if word.starts_with('/') {
                files.push(PathBuf::from(word));
            }
        }
    }
    files.sort();
    files.dedup();
    for f in files {
        let to = root.join(f.strip_prefix("/").unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&f, &to).unwrap();
    }
    // Programs are looked for in /usr/bin too.
    std::fs::create_dir_all(root.join("usr")).unwrap();
    std::os::unix::fs::symlink("../bin", root.join("usr/bin")).unwrap();
    std::fs::write(
        root.join("etc/passwd"),
        format!(
            "root:x:0:0:root:/root:/bin/bash\n{}:x:{}:{}::{}:/bin/bash\n",
            user.name,
            user.uid,
            user.gid,
            user.home.display()
        ),
    )
    .unwrap();
    std::fs::write(
        root.join("etc/group"),
        format!("root:x:0:\n{}:x:{}:\n", user.name, user.gid),
    )
    .unwrap();
}
