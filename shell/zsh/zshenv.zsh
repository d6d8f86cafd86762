# omnish zsh integration: the .zshenv in omnish's private ZDOTDIR.
# The lines above this file (written by omnish into a 0600 file) set __omnish_token,
# __omnish_dir (this directory), __omnish_user_zdotdir and __omnish_user_zdotdir_set.
# Each of omnish's startup files gives the user's ZDOTDIR back while the user's file of the same
# name runs, so their configuration sees exactly what it would see without omnish.
if (( __omnish_user_zdotdir_set )); then
    ZDOTDIR=$__omnish_user_zdotdir
else
    builtin unset ZDOTDIR
fi
{
    if [[ -f ${ZDOTDIR:-$HOME}/.zshenv ]]; then
        builtin source ${ZDOTDIR:-$HOME}/.zshenv
    fi
} always {
    # The user's .zshenv may have chosen its own ZDOTDIR: remember it.
    __omnish_user_zdotdir_set=${+ZDOTDIR}
    __omnish_user_zdotdir=${ZDOTDIR-}
    if [[ -o interactive && -o rcs ]]; then
        # zsh reads .zprofile/.zshrc/.zlogin from ZDOTDIR: ours, which chain to the user's.
        ZDOTDIR=$__omnish_dir
    fi
}
