# shellcheck shell=sh
# omnish: what omnish types to the bootstrap (shell/nest/boot.sh) that asked for the hooks of
# bash, zsh, fish or nu, which evaluates it with its variables: `p` (the shell to start), `l` (1
# for a login shell) and its arguments. Before this, omnish sets `__k` (a nest key: good for one
# `Nest=` or `NestFail=` marker, with which the started shell announces the token it makes
# itself), `__f` (the far key: good for the `Nest=` of shells started inside that shell, a typed
# `bash`, for as long as it lives, and for nothing else) and `__s` (bash, zsh, fish or nu), and
# defines `__omnish_files DIR`, which writes the shell's startup files, and those of a bash, zsh
# or fish started inside it, into DIR from here-documents. Nothing here holds the session's token
# or the started shell's: the directory (0700, files 0600) holds hooks, a nest key spent as the
# shell starts, and the far key, which omnish no longer accepts once the shell has ended.
#
# The shell runs as the child of a small sh (whose arguments hold the directory's name and the
# shell's, no key) that removes the directory when the shell ends, however it ends (`exit`, a
# signal, SIGKILL), and exits with its status. That sh ignores nothing: it catches the signals
# a terminal sends (the shell gets them as usual) so that it outlives the shell; only a SIGKILL
# of that sh itself, or of every process of the session, leaves the directory behind.
# shellcheck disable=SC2154 # __k, __f, __s and __omnish_files: set before; p and l: the bootstrap's
umask 077
__d=$(mktemp -d "${TMPDIR:-/tmp}/omnish.XXXXXXXXXX" 2>/dev/null) || __d=
__z=${ZDOTDIR-}
__zs=0
[ -n "${ZDOTDIR+x}" ] && __zs=1
case $__d$__z in *[!A-Za-z0-9_./-]*) [ -n "$__d" ] && rm -rf -- "$__d"; __d= ;; esac
if [ -n "$__d" ] && __omnish_files "$__d"; then
    case $__s in
    bash) set -- "$p" --rcfile "$__d/rc" -i "$@" ;;
    fish)
        # fish runs --init-command after the user's config.fish ($__d holds no character fish
        # would read specially: checked above).
        if [ "$l" = 1 ]; then
            set -- "$p" -l --init-command "source $__d/omnish.fish" "$@"
        else
            set -- "$p" --init-command "source $__d/omnish.fish" "$@"
        fi
        ;;
    nu)
        # nu evaluates --execute after its own config files, before its first prompt.
        if [ "$l" = 1 ]; then
            set -- "$p" -l --execute "source $__d/omnish.nu" "$@"
        else
            set -- "$p" --execute "source $__d/omnish.nu" "$@"
        fi
        ;;
    *)
        ZDOTDIR=$__d
        export ZDOTDIR
        if [ "$l" = 1 ]; then set -- "$p" -l "$@"; else set -- "$p" "$@"; fi
        ;;
    esac
    exec sh -c 'trap : HUP INT QUIT TERM; "$@"; s=$?; rm -rf -- "$0"; exit "$s"' "$__d" "$@"
fi
[ -n "$__d" ] && rm -rf -- "$__d"
printf '\033]633;%s;P;NestFail=tmp\007' "$__k"
