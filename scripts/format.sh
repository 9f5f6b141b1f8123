#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Formats every C (and C++) file of the tree with .clang-format (clang-format 14, Debian 12).
#   format.sh           rewrites the files in place
#   format.sh --check   changes nothing; lists the files that are not formatted, exit 1 if any
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null; then
    echo "format.sh: clang-format is not installed (apt-get install clang-format)" >&2
    exit 2
fi
mapfile -t files < <(find src include mpi tools train tests fuzz examples \( -name '*.[ch]' -o -name '*.cc' \) | sort)
if [ "${1:-}" != --check ]; then
    clang-format -i "${files[@]}"
    exit 0
fi
bad=0
for f in "${files[@]}"; do
    if ! clang-format "$f" | cmp -s "$f" -; then
        echo "format: $f is not formatted (bash scripts/format.sh fixes it)"
        bad=1
    fi
done
[ $bad = 1 ] || echo "format: ok (${#files[@]} files)"
exit $bad
