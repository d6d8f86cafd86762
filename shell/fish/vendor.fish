# omnish: read from vendor_conf.d by a fish started from a command of a recorded shell: an
# `exec fish` (omnish's fish/exec directory) or a typed `fish`, `fish -l` (fish/nest). That
# shell exported XDG_DATA_DIRS=<that directory>:<the user's value> for the command only: fish
# reads fish/vendor_conf.d/*.fish in each of XDG_DATA_DIRS after the user's conf.d and before
# config.fish. The lines above this file (written by omnish into a private 0600 file) set
# __omnish_dir, __omnish_self (that directory), and the token (exec) or the key (nest).
#
# First the user's XDG_DATA_DIRS goes back (unset when only the XDG default followed ours), so
# config.fish and every program see it as it was. A fish that is not interactive (a script run
# by a program that inherited the variable) loads nothing.
if test "$XDG_DATA_DIRS" = "$__omnish_self:/usr/local/share:/usr/share"
    set -e XDG_DATA_DIRS
else if test (string sub -l (string length -- "$__omnish_self:") -- "$XDG_DATA_DIRS") = "$__omnish_self:"
    set -gx XDG_DATA_DIRS (string sub -s (math (string length -- "$__omnish_self:") + 1) -- "$XDG_DATA_DIRS")
end
set -e __omnish_self
if not status is-interactive
    set -e __omnish_token __omnish_key __omnish_dir __omnish_nested __omnish_auto __omnish_bin
    return 0
end
