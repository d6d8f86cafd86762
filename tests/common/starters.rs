//! Programs that start an interactive shell of their own for a project (`poetry shell`, `pipenv
//! shell`, `hatch shell`, `nix develop`, `nix-shell`), for the tests that type them in a
//! recorded shell (issue 16).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// A stand-in for nix, which cannot be installed here: it starts the project's shell the way
/// nix 2's `nix develop` and `nix-shell` do, as `bash --rcfile FILE`, where FILE reads
/// ~/.bashrc, sets the project's environment and prompt and runs the shell hook; `--run CMD`
/// runs CMD instead.
pub const NIX: &str = r#"#!/bin/sh
case ${0##*/} in
nix) [ "$1" = develop ] || { echo "stand-in nix: develop only" >&2; exit 2; }; shift ;;
esac
case ${1-} in --run | --command) exec bash -c "$2" ;; esac
dir=$(mktemp -d)
cat >"$dir/rc" <<RC
rm -rf '$dir'; [ -n "\$PS1" ] && [ -e ~/.bashrc ] && source ~/.bashrc;
shopt -u expand_aliases
export IN_NIX_SHELL=impure
shopt -s expand_aliases
[ -n "\$PS1" ] && PS1='[nix-shell:\w] READY> ';
echo shell-hook-ran
RC
exec bash --rcfile "$dir/rc"
"#;

/// poetry's project: no package, no dependency, so that `poetry shell` only makes a virtualenv.
pub const PYPROJECT: &str = "[tool.poetry]\nname = \"proj\"\nversion = \"0.1.0\"\ndescription = \"\"\n\
authors = [\"a <a@example.com>\"]\npackage-mode = false\n\n[tool.poetry.dependencies]\n\
python = \">=3.8\"\n";

/// hatch's project: nothing to install, its default environment a virtualenv `.venv` in the
/// project, so that `hatch shell` only makes that virtualenv.
pub const HATCH_PYPROJECT: &str = "[project]\nname = \"proj\"\nversion = \"0.1.0\"\n\n\
[tool.hatch.envs.default]\nskip-install = true\npath = \".venv\"\n";

/// pipenv's project: no package, so that `pipenv shell` only makes a virtualenv.
pub const PIPFILE: &str = "[packages]\n\n[requires]\n";

/// A directory holding the nix stand-ins (`nix`, `nix-shell`), and the environment that puts it
/// first on PATH and makes poetry keep its virtualenv small and in the project.
pub fn bin_dir() -> (tempfile::TempDir, Vec<(String, String)>) {
    let dir = tempfile::tempdir().unwrap();
    for name in ["nix", "nix-shell"] {
        let f = dir.path().join(name);
        std::fs::write(&f, NIX).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let env = vec![
        ("PATH".into(), path_with(dir.path())),
        ("POETRY_VIRTUALENVS_IN_PROJECT".into(), "true".into()),
        ("POETRY_VIRTUALENVS_OPTIONS_NO_PIP".into(), "true".into()),
        (
            "POETRY_VIRTUALENVS_OPTIONS_NO_SETUPTOOLS".into(),
            "true".into(),
        ),
        ("PIPENV_VENV_IN_PROJECT".into(), "1".into()),
        ("LANG".into(), "C.UTF-8".into()),
    ];
    (dir, env)
}

/// PATH with `dir` first.
pub fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Adds an executable `name` holding `text` to `dir`.
pub fn add(dir: &Path, name: &str, text: &str) {
    let f = dir.join(name);
    std::fs::write(&f, text).unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
}
