# omnish zsh hooks (appended to omnish's .zshrc after the user's .zshrc ran).
# Markers: see src/marker.rs. Functions use `emulate -L zsh` so user options (nounset,
# sh_word_split, ksh_arrays, ...) cannot change them; `$?` is read before anything else.
typeset -g __omnish_esc=''
# Zero-width marker in front of PROMPT_EOL_MARK: zsh prints its PROMPT_SP filler ("%" and a
# line of spaces) before precmd runs, so this tells omnish where the command's output ended.
typeset -g __omnish_eol=$'%{\e]133;Z;aid='"${__omnish_token}"$'\a%}'

# Escapes $1 into __omnish_esc: `\` → `\\`, `;`, control bytes and DEL → \xHH.
__omnish_escape() {
    emulate -L zsh
    local s=$1 c
    local -i i
    s=${s//\\/\\\\}
    s=${s//;/\\x3b}
    if [[ $s == *[[:cntrl:]]* ]]; then
        for i in {1..31} 127; do
            c=${(#)i}
            s=${s//$c/\\x${(l:2::0:)$(( [##16] i ))}}
        done
    fi
    __omnish_esc=$s
}

__omnish_mark_eol() {
    if [[ -o prompt_sp && ${PROMPT_EOL_MARK-%B%S%#%s%b} != ${__omnish_eol}* ]]; then
        PROMPT_EOL_MARK=${__omnish_eol}${PROMPT_EOL_MARK-%B%S%#%s%b}
    fi
}

__omnish_precmd() {
    local -i st=$?
    emulate -L zsh
    # The end of the command, if one ran (omnish ignores an end without a start: empty line,
    # Ctrl-C at the prompt), the cwd, and the prompt start.
    __omnish_escape $PWD
    builtin printf '\e]133;D;%d;aid=%s\a\e]633;P;Cwd=%s;%s\a\e]133;A;aid=%s\a' \
        $st $__omnish_token $__omnish_esc $__omnish_token $__omnish_token
    __omnish_typed=''
    __omnish_mark_eol
    # Keep the preexec hook last, so its marker comes right before the command's output.
    # (precmd_functions is put right from preexec: never change the array being run.)
    if [[ ${preexec_functions[-1]-} != __omnish_preexec ]]; then
        preexec_functions=(${preexec_functions:#__omnish_preexec} __omnish_preexec)
    fi
    return st
}

# The line editor's buffer as typed, before history expansion (`!!`, `^a^b`); one line per
# continuation prompt.
typeset -g __omnish_typed=''
__omnish_line_finish() {
    __omnish_typed+=${__omnish_typed:+$'\n'}$BUFFER
}

__omnish_preexec() {
    emulate -L zsh
    # First, so the end marker comes before what other precmd hooks print.
    if [[ ${precmd_functions[1]-} != __omnish_precmd ]]; then
        precmd_functions=(__omnish_precmd ${precmd_functions:#__omnish_precmd})
    fi
    __omnish_mark_eol
    # A line HIST_IGNORE_SPACE keeps out of history is private (omnish decides what to keep).
    if [[ -o hist_ignore_space && ( $1 == [[:blank:]]* || $__omnish_typed == [[:blank:]]* ) ]]; then
        builtin printf '\e]633;P;HistIgnoreSpace=1;%s\a' $__omnish_token
    fi
    if [[ -n $__omnish_typed ]]; then
        __omnish_escape $__omnish_typed
        builtin printf '\e]633;P;Typed=%s;%s\a' $__omnish_esc $__omnish_token
        __omnish_typed=''
    fi
    __omnish_escape $1
    builtin printf '\e]633;E;%s;%s\a\e]133;C;aid=%s\a' $__omnish_esc $__omnish_token $__omnish_token
}

typeset -ga precmd_functions preexec_functions
() {
    emulate -L zsh
    precmd_functions=(__omnish_precmd ${precmd_functions:#__omnish_precmd})
    preexec_functions=(${preexec_functions:#__omnish_preexec} __omnish_preexec)
    __omnish_mark_eol
    # Keeps a zle-line-finish widget the user defined.
    builtin autoload -Uz add-zle-hook-widget 2>/dev/null &&
        add-zle-hook-widget line-finish __omnish_line_finish 2>/dev/null
}
