# omnish: .zlogin (login shells), chaining to the user's; the user's ZDOTDIR is back for good.
if (( __omnish_user_zdotdir_set )); then ZDOTDIR=$__omnish_user_zdotdir; else builtin unset ZDOTDIR; fi
if [[ -f ${ZDOTDIR:-$HOME}/.zlogin ]]; then
    builtin source ${ZDOTDIR:-$HOME}/.zlogin
fi
