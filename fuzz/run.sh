#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# fuzz/run.sh PROGRAM NAME SECONDS FUZZ_DIR OUT_DIR - runs one libFuzzer
# harness for SECONDS from its seed corpus (FUZZ_DIR/corpus/NAME) and every
# input that once failed (FUZZ_DIR/regress/NAME); what it learns goes to
# OUT_DIR/corpus/NAME.  Fails on a crash, a broken promise, a leak, a
# timeout (10 s per input), an allocation over 2 GiB or any sanitizer
# report, leaving the input in OUT_DIR/artifacts/ (copy it into
# fuzz/regress/NAME/ with the fix).  Prints one line of figures, and
# appends it to OUT_DIR/summary.txt.
#
# COLLIE_FUZZ_SEED (default 1) fixes libFuzzer's random seed, so a campaign is
# the same sequence of inputs wherever it runs: a shorter or slower run tries a
# prefix of a longer one, and a run that passed here passes in CI.  Set it to 0
# for a fresh random campaign (what finds new bugs; docs/RELIABILITY.md).
set -uo pipefail
prog=$1 name=$2 seconds=$3 dir=$4 out=$5
mkdir -p "$out/corpus/$name" "$out/artifacts"
inputs=("$out/corpus/$name" "$dir/corpus/$name")
[ -d "$dir/regress/$name" ] && inputs+=("$dir/regress/$name")
log="$out/$name.log"
"$prog" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -malloc_limit_mb=2048 \
    -seed="${COLLIE_FUZZ_SEED:-1}" -print_final_stats=1 -artifact_prefix="$out/artifacts/$name-" "${inputs[@]}" >"$log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
echo "fuzz $name (seed ${COLLIE_FUZZ_SEED:-1}): ${runs:-?} executions in $seconds s, ${cov:-?} edges covered (${ft:-?} features), $(ls "$out/corpus/$name" | wc -l) inputs in its corpus, exit $rc" |
    tee -a "$out/summary.txt"
if [ $rc -ne 0 ]; then
    tail -60 "$log"
    echo "the failing input: $(ls "$out"/artifacts/"$name"-* 2>/dev/null | head -1)"
fi
exit $rc
