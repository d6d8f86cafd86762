# omnish: the start of the .zshenv that a zsh started from a command of a recorded shell reads
# (a typed `zsh`, `zsh -l`, or an `exec zsh` in a shell that is itself nested): that shell
# exported ZDOTDIR=<omnish's directory>/nest for the command only. The lines above this file
# (written by omnish into a 0600 file) set __omnish_key (the session's token), __omnish_dir
# (omnish's directory, whose .zprofile, .zshrc and .zlogin this shell reads next),
# __omnish_nested, __omnish_user_zdotdir and __omnish_user_zdotdir_set.
#
# An interactive zsh takes a token of its own, announces it with the key (omnish then follows
# it as a shell nested in the running command), says what it is, as whom and where, and
# forgets the key once it has said so again at its first __omnish_again_prompts prompts
# (omnish.zsh). Without a token it runs as it would without omnish.
typeset -g __omnish_token=''
if [[ -o interactive && -n ${__omnish_key-} ]]; then
    () {
        emulate -L zsh
        local t
        t=$(od -An -N16 -tx1 /dev/urandom 2>/dev/null)
        t=${t//[^0-9a-f]/}
        (( ${#t} == 32 )) || return 0
        __omnish_token=$t
        local u=${(%):-%n} h=${(%):-%M}
        builtin printf -v __omnish_again '\e]633;%s;P;Nest=%s\a\e]633;%s;P;Shell=zsh\a\e]633;%s;P;User=%s\a\e]633;%s;P;Host=%s\a' \
            $__omnish_key $t $t $t ${u//[;\\[:cntrl:]]/} $t ${h//[;\\[:cntrl:]]/}
        builtin printf '%s' $__omnish_again
        # Said again at the first prompts (omnish hears it once and ignores the rest): a
        # program between omnish and this shell may read its first output away (`pipenv shell`
        # drains everything up to its own activation through pexpect), announcement included.
        typeset -gi __omnish_again_left=${__omnish_again_prompts:-0}
        (( __omnish_again_left > 0 )) || builtin unset __omnish_again
    }
fi
builtin unset __omnish_key
