# omnish: read as $ENV by a bash that replaced a recorded shell (`exec bash`). The recorded
# shell exported POSIXLY_CORRECT and ENV for that exec only: a bash started in POSIX mode reads
# $ENV instead of its usual startup files. This file leaves POSIX mode, then omnish.bash (which
# follows, after the header lines omnish wrote above: __omnish_token, __omnish_dir) reads the
# user's startup files as bash would have and installs the hooks again.
builtin set +o posix
builtin unset POSIXLY_CORRECT ENV
builtin shopt -u inherit_errexit 2>/dev/null
# POSIX mode's default history file.
if [[ ${HISTFILE-} == "${HOME-}/.sh_history" ]]; then
    HISTFILE=${HOME-}/.bash_history
fi
__omnish_login=0
builtin shopt -q login_shell && __omnish_login=1
__omnish_rcfile=''
__omnish_norc=0
# Debian's bash reads /etc/bash.bashrc before ~/.bashrc; POSIX mode skipped it.
__omnish_sysrc=1
# Options of its own that POSIX mode skipped with the startup files: `nix develop` and
# `nix-shell` start `bash --rcfile FILE` (FILE sets up the project's environment, then reads
# ~/.bashrc). Read from the shell's argument list, up to the first word that is no option.
if [[ -r /proc/$$/cmdline ]] && ((BASH_VERSINFO[0] > 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] >= 4))); then
    builtin mapfile -d '' -t __omnish_argv </proc/$$/cmdline
    for ((__omnish_i = 1; __omnish_i < ${#__omnish_argv[@]}; __omnish_i++)); do
        case ${__omnish_argv[__omnish_i]} in
        --rcfile | --init-file)
            __omnish_rcfile=${__omnish_argv[__omnish_i + 1]-}
            ((__omnish_i++))
            ;;
        --norc) __omnish_norc=1 ;;
        -*) ;;
        *) break ;;
        esac
    done
    builtin unset __omnish_argv __omnish_i
fi
