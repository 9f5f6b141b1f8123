# SPDX-License-Identifier: BSD-3-Clause
# lib.sh - helpers for the shell tests: assertions that say what went wrong.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
# test_time SECONDS: a wall-clock bound of the suite, times COLLIE_TEST_TIME_MULTIPLIER
# (test_util.h's test_time), whole seconds rounded up.
test_time() {
    awk -v s="$1" -v m="${COLLIE_TEST_TIME_MULTIPLIER:-1}" \
        'BEGIN { if (m < 1) m = 1; t = s * m; printf "%d\n", (t == int(t)) ? t : int(t) + 1 }'
}
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
