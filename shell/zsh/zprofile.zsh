# omnish: .zprofile (login shells), chaining to the user's.
if (( __omnish_user_zdotdir_set )); then ZDOTDIR=$__omnish_user_zdotdir; else builtin unset ZDOTDIR; fi
{
    if [[ -f ${ZDOTDIR:-$HOME}/.zprofile ]]; then
        builtin source ${ZDOTDIR:-$HOME}/.zprofile
    fi
} always {
    __omnish_user_zdotdir_set=${+ZDOTDIR}
    __omnish_user_zdotdir=${ZDOTDIR-}
    ZDOTDIR=$__omnish_dir
}
