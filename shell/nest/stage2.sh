# shellcheck shell=sh
# omnish: what omnish types to the bootstrap (shell/nest/boot.sh) that asked for the hooks of
# bash, zsh, fish or nu, which evaluates it with its variables: `p` (the shell to start), `l` (1
# for a login shell) and its arguments. Before this, omnish sets `__k` (a nest key: good for one
# `Nest=` or `NestFail=` marker, with which the started shell announces the token it makes
# itself) and `__s` (bash, zsh, fish or nu), and defines `__omnish_files DIR`, which writes the
# shell's startup files into DIR from here-documents. Nothing here holds the session's token or
# the started shell's: the directory holds hooks and a key that is spent as the shell starts,
# and it is removed once read.
# shellcheck disable=SC2154 # __k, __s and __omnish_files: set before; p and l: the bootstrap's
umask 077
__d=$(mktemp -d "${TMPDIR:-/tmp}/omnish.XXXXXXXXXX" 2>/dev/null) || __d=
__z=${ZDOTDIR-}
case $__d$__z in *[!A-Za-z0-9_./-]*) [ -n "$__d" ] && rm -rf -- "$__d"; __d= ;; esac
if [ -n "$__d" ] && __omnish_files "$__d"; then
    case $__s in
    bash) exec "$p" --rcfile "$__d/rc" -i "$@" ;;
    fish)
        # fish runs --init-command after the user's config.fish ($__d holds no character fish
        # would read specially: checked above).
        if [ "$l" = 1 ]; then
            exec "$p" -l --init-command "source $__d/omnish.fish" "$@"
        else
            exec "$p" --init-command "source $__d/omnish.fish" "$@"
        fi
        ;;
    nu)
        # nu evaluates --execute after its own config files, before its first prompt.
        if [ "$l" = 1 ]; then
            exec "$p" -l --execute "source $__d/omnish.nu" "$@"
        else
            exec "$p" --execute "source $__d/omnish.nu" "$@"
        fi
        ;;
    *)
        ZDOTDIR=$__d
        export ZDOTDIR
        if [ "$l" = 1 ]; then exec "$p" -l "$@"; else exec "$p" "$@"; fi
        ;;
    esac
fi
[ -n "$__d" ] && rm -rf -- "$__d"
printf '\033]633;%s;P;NestFail=tmp\007' "$__k"
