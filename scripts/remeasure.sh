#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Re-measures docs/PERFORMANCE.md: runs the command each table set's .meta
# names (docs/results/perf/NAME.meta), writes its CSV over NAME.csv, dates
# the .meta today and regenerates the page (scripts/perf_tables.py).  Run it
# on an otherwise idle machine, as root where a set needs emulated hosts.
#   remeasure.sh [NAME...]        (default: every set; COLLIE: build/collie)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=docs/results/perf
collie=${COLLIE:-$root/build/collie}
[ -x "$collie" ] || { echo "remeasure: build collie first (bash scripts/demo.sh)" >&2; exit 1; }
names=("$@")
[ ${#names[@]} -gt 0 ] || for m in "$dir"/*.meta; do names+=("$(basename "$m" .meta)"); done
for name in "${names[@]}"; do
    meta=$dir/$name.meta
    [ -f "$meta" ] || { echo "remeasure: no $meta" >&2; exit 1; }
    cmd=$(sed -n 's/^command: //p' "$meta")
    case $cmd in
    "collie "*) cmd="$collie ${cmd#collie }" ;;
    esac
    echo "# $name: $cmd --csv $dir/$name.csv"
    eval "$cmd --csv $dir/$name.csv.new" >"/tmp/remeasure_$name.txt" 2>&1 ||
        { echo "remeasure: $name failed: /tmp/remeasure_$name.txt" >&2; exit 1; }
    mv "$dir/$name.csv.new" "$dir/$name.csv"
    sed -i "s/^date: .*/date: $(date +%F)/" "$meta"
done
python3 scripts/perf_tables.py
