# lib.sh - helpers for the shell tests: assertions that say what went wrong.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect_status WANT CMD...: runs CMD, stdout+stderr to $out, checks the exit status.
expect_status() {
    local want=$1; shift
    out=$("$@" 2>&1); local got=$?
    [ "$got" = "$want" ] || fail "'$*' exited $got, want $want; output:
$out"
}
expect_output() { # expect_output PATTERN: the last command's output matches (grep -E)
    printf '%s\n' "$out" | grep -Eq -- "$1" || fail "output lacks /$1/:
$out"
}
