# omnish: a fish started from a command of a recorded shell (a typed `fish`, `fish -l`, or an
# `exec fish` in a shell that is itself nested) takes a token of its own, announces it with the
# key (__omnish_key, the session's token, set above: omnish then follows it as a shell nested
# in the running command, and its commands become records of their own), says what it is, as
# whom and where, and forgets the key once it has said so again at its first
# __omnish_again_prompts prompts (omnish.fish). Without a token (no randomness to be had) it
# runs as it would without omnish.
set -g __omnish_token (od -An -N16 -tx1 /dev/urandom 2>/dev/null | string replace -ra '[^0-9a-f]' '' | string join '')
if test (string length -- "$__omnish_token") -eq 32; and test -n "$__omnish_key"
    set -l u (id -un 2>/dev/null | string replace -ra '[;\\\\[:cntrl:]]' '')
    set -l h (string replace -ra '[;\\\\[:cntrl:]]' '' -- $hostname)
    set -g __omnish_again (printf '\e]633;%s;P;Nest=%s\a\e]633;%s;P;Shell=fish\a\e]633;%s;P;User=%s\a\e]633;%s;P;Host=%s\a' \
        $__omnish_key $__omnish_token $__omnish_token $__omnish_token "$u" $__omnish_token "$h")
    printf '%s' $__omnish_again
    # Said again at the first prompts (omnish hears it once and ignores the rest): a program
    # between omnish and this shell may read its first output away (`pipenv shell` drains
    # everything up to its own activation through pexpect), announcement included.
    set -g __omnish_again_left 0
    set -q __omnish_again_prompts; and set __omnish_again_left $__omnish_again_prompts
    test $__omnish_again_left -gt 0; or set -e __omnish_again
else
    set -g __omnish_token ''
end
set -e __omnish_key
