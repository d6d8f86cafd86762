# omnish: read first (as $ENV) by a bash started from a command of a recorded shell: a typed
# `bash`, `bash -l`, or an `exec bash` in a shell that is itself nested. That shell exported
# POSIXLY_CORRECT and ENV for the command only (a bash started in POSIX mode reads $ENV
# instead of its startup files). The lines above this file (written by omnish into a private
# 0600 file) set __omnish_key (the session's token), __omnish_dir and __omnish_nested.
#
# This shell takes a token of its own, announces it with the key (omnish then follows it as a
# shell nested in the running command, and its commands become records of their own), says
# what it is, as whom and where, and forgets the key. exec.bash and omnish.bash follow: they
# leave POSIX mode, read the user's startup files as bash would have, and install the hooks.
# Without a token (no randomness to be had) the shell runs as it would without omnish.
__omnish_token=''
if ((BASH_VERSINFO[0] > 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] >= 1))); then
    builtin printf -v __omnish_token '%08x%08x%08x%08x' "$SRANDOM" "$SRANDOM" "$SRANDOM" "$SRANDOM"
else
    __omnish_token=$(od -An -N16 -tx1 /dev/urandom 2>/dev/null)
    __omnish_token=${__omnish_token//[!0-9a-f]/}
fi
if [[ ${#__omnish_token} == 32 && -n ${__omnish_key-} ]]; then
    __omnish_u='\u' __omnish_host='\H'
    __omnish_u=${__omnish_u@P} __omnish_host=${__omnish_host@P}
    builtin printf -v __omnish_again '\e]633;%s;P;Nest=%s\a\e]633;%s;P;Shell=bash\a\e]633;%s;P;User=%s\a\e]633;%s;P;Host=%s\a' \
        "$__omnish_key" "$__omnish_token" "$__omnish_token" \
        "$__omnish_token" "${__omnish_u//[;\\[:cntrl:]]/}" \
        "$__omnish_token" "${__omnish_host//[;\\[:cntrl:]]/}"
    builtin printf '%s' "$__omnish_again"
    # Said again at the first prompts (omnish hears it once and ignores the rest): a program
    # between omnish and this shell may read its first output away (`pipenv shell` drains
    # everything up to its own activation through pexpect), announcement included.
    __omnish_again_left=${__omnish_again_prompts:-0}
    ((__omnish_again_left > 0)) || builtin unset __omnish_again
    builtin unset __omnish_u __omnish_host
else
    __omnish_token=''
fi
builtin unset __omnish_key
