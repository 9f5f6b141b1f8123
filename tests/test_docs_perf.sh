#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/PERFORMANCE.md is what scripts/perf_tables.py makes of the CSVs in
# docs/results/perf/, and every CSV there has its .meta: a re-measurement
# that forgot to regenerate the page, or a page edited by hand, fails; and
# the script compares libraries at equal placement (--self-test).
#   test_docs_perf.sh ROOT
set -euo pipefail
root=$1
for csv in "$root"/docs/results/perf/*.csv; do
    [ -f "${csv%.csv}.meta" ] || { echo "FAIL: $csv has no .meta"; exit 1; }
done
python3 "$root/scripts/perf_tables.py" --self-test
python3 "$root/scripts/perf_tables.py" --check
echo "docs/PERFORMANCE.md matches its CSVs"
