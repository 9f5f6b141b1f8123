#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Times collie_comm_shrink after a fault (docs/RELIABILITY.md): for each case,
# RUNS jobs of tests/test_shrink under collie run, and the slowest survivor's
# shrink time of each; prints median and max.
#   bash scripts/shrink_times.sh [BUILD=build] [RUNS=10]
build=${1:-build} runs=${2:-10}
collie=$build/collie prog=$build/tests/test_shrink
[ -x "$prog" ] || { echo "build first: $prog is missing" >&2; exit 1; }
printf '%-7s %-6s %-14s %8s %8s  %s\n' hosts ranks fault median_s max_s runs
for hosts in 1 2; do
    for c in "4 kill 0" "4 kill 3" "8 kill 0" "8 kill 5" "16 kill 0" "16 kill 9" "8 kill 0 1 2" "4 stop 0" "4 stop 3"; do
        set -- $c
        n=$1; shift
        victims=" ${*:2} "
        times=()
        for _ in $(seq 1 "$runs"); do
            t=$(COLLIE_TIMEOUT=2 COLLIE_DEBUG=NONE VICTIMS="$victims" SHRINK_HOSTS=$hosts \
                "$collie" run -n "$n" sh -c '
                [ "$SHRINK_HOSTS" -gt 1 ] && export COLLIE_HOST=h$((COLLIE_RANK % SHRINK_HOSTS))
                "$0" "$@"; st=$?
                case "$VICTIMS" in *" $COLLIE_RANK "*) [ $st = 137 ] ;; *) exit $st ;; esac' \
                "$prog" "$@" 2>&1 | sed -n 's/.*the slowest shrink took \([0-9.]*\) s.*/\1/p')
            [ -n "$t" ] || { echo "a run of '$c' on $hosts host(s) failed" >&2; exit 1; }
            times+=("$t")
        done
        printf '%s\n' "${times[@]}" | sort -g | awk -v h="$hosts" -v n="$n" -v f="$*" '
            { v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                printf "%-7s %-6s %-14s %8.3f %8.3f  %d\n", h, n, f, m, v[NR], NR }'
    done
done
