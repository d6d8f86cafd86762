# shellcheck shell=sh
# omnish: the bootstrap `omnish nest` puts in the command of the program it runs (ssh's remote
# command, sudo's, su's, docker exec's):
#   sh -c '<the lines of this file that are not comments, joined by spaces>' omnish KEY LOGIN PROGRAM [ARGS...]
# KEY is a request key `omnish nest` registered with the recording omnish (good for one
# request); LOGIN is 1 for a login shell; PROGRAM the shell to start (empty: $SHELL).
# It asks omnish, through the terminal, for the hooks of that shell: with the terminal raw and
# silent, it prints the request (the shell's name, `-`, and which of bash, zsh and fish the far
# side has, as `b`, `z`, `f`: shells started inside the far shell get hooks for those), and
# omnish answers by typing `#omnish-hooks <N>`, a newline and
# N bytes of sh that end with `# omnish-end`, every line behind a `#` that the bootstrap takes
# off (should the answer reach a shell instead, the program having died meanwhile, it is only
# comments). That sh writes the hooks into a private temporary
# directory and starts the shell, which keeps it for the shells started inside it; a small sh
# removes it when the shell ends (shell/nest/stage2.sh).
# Anything else (no controlling terminal, which it reports as `Q;notty` and omnish does not
# answer; no answer within 3 seconds; a cut answer) and the shell starts exactly as it would
# have without omnish. Nothing here may hold a single quote, an
# exclamation mark or a newline once joined: the line travels as one argument, or inside
# single quotes through whatever shell the far side runs.
k=$1; l=$2; shift 2;
p=${1:-${SHELL:-/bin/sh}}; [ $# -gt 0 ] && shift;
if [ "$l" = 1 ]; then cd "${HOME:-/}" 2>/dev/null || :; fi;
r() { stty "$o" 2>/dev/null; if [ "$l" = 1 ]; then exec "$p" -l "$@"; else exec "$p" "$@"; fi; };
{ : >/dev/tty; } 2>/dev/null || { printf "\033]633;%s;Q;notty\007" "$k"; r "$@"; };
o=$(stty -g 2>/dev/null) || r "$@";
stty raw -echo min 0 time 30 2>/dev/null || r "$@";
c=${p##*/};
case $c in bash | bash[0-9]* | zsh | zsh[0-9]* | fish | nu | sh | dash | ash | ksh | mksh | tcsh | csh) ;; *) c=other ;; esac;
h=; command -v bash >/dev/null 2>&1 && h=b; command -v zsh >/dev/null 2>&1 && h=${h}z; command -v fish >/dev/null 2>&1 && h=${h}f;
printf "\033]633;%s;Q;%s-%s\007" "$k" "$c" "$h";
n=;
while IFS= read -r x; do case $x in "#omnish-hooks "*) n=${x#"#omnish-hooks "}; break ;; esac; done;
s=;
[ -n "$n" ] && s=$(head -c "$n" 2>/dev/null);
stty "$o" 2>/dev/null;
case $s in *"# omnish-end") s=$(printf "%s\n" "$s" | sed "s/^#//") && eval "$s" ;; esac;
r "$@"
