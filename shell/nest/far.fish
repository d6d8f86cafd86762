# omnish: the ask and fix keys of a fish on the far side of `omnish nest` (ssh, sudo, a
# container), where omnish is not installed. The lines omnish wrote above set __omnish_ask_key
# and __omnish_fix_key (in `bind` notation, as `omnish init fish` binds them). A key prints a
# request with this shell's token; the recording omnish runs `omnish ask` (or `omnish fix`) on
# its side, shows the answer below the line, and types Ctrl-] (after the corrected command, for
# fix), which ends the wait here (src/record/farkey.rs). fish's `read` cannot stop at a byte of
# our choosing, so sh reads the terminal a byte at a time. Ctrl-C gives up.
function __omnish_far_key -a action
    test -n "$__omnish_token"; or return 0
    test $action = ask; and echo
    printf '\e]633;%s;P;Key=%s\a' $__omnish_token $action
    set -l reply (command sh -c 'g=$(printf "\035"); s=$(stty -g) || exit 0; stty -icanon -echo min 1 time 0; o=; while c=$(dd bs=1 count=1 2>/dev/null) && [ -n "$c" ]; do [ "$c" = "$g" ] && break; o=$o$c; done; stty "$s"; printf "%s" "$o"' </dev/tty)
    if test $action = fix -a -n "$reply"
        commandline -r -- $reply
        commandline -C (string length -- $reply)
    end
    commandline -f repaint
end
for __omnish_m in default insert
    bind -M $__omnish_m $__omnish_ask_key '__omnish_far_key ask'
    bind -M $__omnish_m $__omnish_fix_key '__omnish_far_key fix'
end
set -e __omnish_m
