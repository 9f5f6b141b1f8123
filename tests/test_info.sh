#!/bin/bash
# collie info: version, detection, the whole configuration table; bad and unknown variables.
collie=$1
. "$(dirname "$0")/lib.sh"
src=$(dirname "$0")/../src/core/config.h

expect_status 0 "$collie" info
expect_output "^collie [0-9]+\.[0-9]+\.[0-9]+"
expect_output "1 rank\(s\) on 1 host"
expect_output "allreduce +oneshot, twoshot"
# every variable of the table, with its default
for var in $(grep -oE '^    X\([A-Z_0-9]+' "$src" | sed 's/.*X(/COLLIE_/'); do
    expect_output "^$var "
done
expect_status 0 "$collie" info --config
expect_output "^COLLIE_TIMEOUT +300 +300 +seconds"

expect_status 0 "$collie" run -n 3 "$collie" info
expect_output "3 rank\(s\) on 1 host"
[ "$(printf '%s\n' "$out" | grep -c '^collie ')" = 1 ] || fail "only rank 0 should print"

# a bad value is refused, naming the variable; an unknown one is warned about
expect_status 1 env COLLIE_TIMEOUT=soon "$collie" info
expect_output "COLLIE_TIMEOUT='soon' is not a positive number of seconds"
expect_status 1 env COLLIE_ALGO=allreduce:magic "$collie" info
expect_output "COLLIE_ALGO='allreduce:magic'"
expect_status 0 env COLLIE_TIMOUT=5 "$collie" info
expect_output "unknown variable COLLIE_TIMOUT"
echo "info: ok"
