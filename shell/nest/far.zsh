# omnish: the ask and fix keys of a zsh on the far side of `omnish nest` (ssh, sudo, a
# container), where omnish is not installed. The lines omnish wrote above set __omnish_ask_key
# and __omnish_fix_key (as keys.ask and keys.fix). A key prints a request with this shell's
# token; the recording omnish runs `omnish ask` (or `omnish fix`) on its side, shows the answer
# below the line, and types Ctrl-] (after the corrected command, for fix), which ends the wait
# here (src/record/farkey.rs); zle then redraws the prompt and the line. Ctrl-C gives up.
__omnish_far_key() {
    [[ -n ${__omnish_token-} ]] || return 0
    local __omnish_action=${WIDGET#__omnish_far_} __omnish_reply=''
    zle -I
    print -rn -- $'\e]633;'"$__omnish_token;P;Key=$__omnish_action"$'\a' >/dev/tty
    IFS= read -rs -d $'\035' -t 900 __omnish_reply </dev/tty || return 0
    if [[ $__omnish_action == fix && -n $__omnish_reply ]]; then
        BUFFER=$__omnish_reply
        CURSOR=${#BUFFER}
    fi
}
zle -N __omnish_far_ask __omnish_far_key
zle -N __omnish_far_fix __omnish_far_key
bindkey -M emacs "$__omnish_ask_key" __omnish_far_ask
bindkey -M viins "$__omnish_ask_key" __omnish_far_ask
bindkey -M emacs "$__omnish_fix_key" __omnish_far_fix
bindkey -M viins "$__omnish_fix_key" __omnish_far_fix
