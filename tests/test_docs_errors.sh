#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/troubleshooting.md explains every status collie_strerror knows: a
# status added to include/collie.h without its section fails.
#   test_docs_errors.sh ROOT
set -euo pipefail
root=$1
page=$root/docs/troubleshooting.md
missing=0
for status in $(grep -oE 'X\(COLLIE_ERR_[A-Z_]+' "$root/include/collie.h" | sed 's/X(//' | sort -u); do
    grep -q "\`$status\`" "$page" || { echo "FAIL: $status is not in docs/troubleshooting.md"; missing=1; }
done
[ $missing = 0 ] && echo "docs/troubleshooting.md covers every status"
exit $missing
