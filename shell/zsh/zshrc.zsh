# omnish: .zshrc, chaining to the user's, then installing omnish's hooks after everything the
# user's .zshrc set up (so `precmd_functions=(...)` there cannot erase them).
if (( __omnish_user_zdotdir_set )); then ZDOTDIR=$__omnish_user_zdotdir; else builtin unset ZDOTDIR; fi
{
    if [[ -f ${ZDOTDIR:-$HOME}/.zshrc ]]; then
        builtin source ${ZDOTDIR:-$HOME}/.zshrc
    fi
} always {
    __omnish_user_zdotdir_set=${+ZDOTDIR}
    __omnish_user_zdotdir=${ZDOTDIR-}
    # A login shell still reads .zlogin, ours; otherwise the user's ZDOTDIR is back for good.
    if [[ -o login ]]; then
        ZDOTDIR=$__omnish_dir
    fi
}
