# omnish: the ask and fix keys of a bash on the far side of `omnish nest` (ssh, sudo, a
# container), where omnish is not installed. The lines omnish wrote above set __omnish_ask_key
# and __omnish_fix_key (readline syntax, as keys.ask and keys.fix). A key prints a request with
# this shell's token; the recording omnish runs `omnish ask` (or `omnish fix`) on its side, shows
# the answer below the line, and types Ctrl-] (after the corrected command, for fix), which ends
# the wait here (src/record/farkey.rs). Ctrl-C gives up waiting.
# shellcheck disable=SC2154 # __omnish_ask_key, __omnish_fix_key: set above
__omnish_far_key() {
    [[ -n ${__omnish_token-} ]] || builtin return 0
    if [[ $1 == ask ]]; then
        # The prompt and the line, as shown (what readline hides between \001 and \002, the
        # markers with them, left out), so that the answer comes below them.
        local __omnish_p=${PS1@P} __omnish_shown=''
        while [[ $__omnish_p == *$'\001'*$'\002'* ]]; do
            __omnish_shown+=${__omnish_p%%$'\001'*}
            __omnish_p=${__omnish_p#*$'\002'}
        done
        __omnish_shown+=$__omnish_p
        builtin printf '%s%s\n' "${__omnish_shown##*$'\n'}" "${READLINE_LINE-}"
    fi
    builtin printf '\e]633;%s;P;Key=%s\a' "$__omnish_token" "$1"
    local __omnish_reply=''
    IFS= builtin read -rs -d $'\035' -t 900 __omnish_reply || builtin return 0
    if [[ $1 == fix && -n $__omnish_reply ]]; then
        READLINE_LINE=$__omnish_reply
        READLINE_POINT=${#__omnish_reply}
    fi
}
builtin bind -m emacs -x "\"${__omnish_ask_key}\": __omnish_far_key ask"
builtin bind -m emacs -x "\"${__omnish_fix_key}\": __omnish_far_key fix"
