#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Every source file of the tree names its license (LICENSE: BSD-3-Clause) in its
# first two lines, and the packages say it too.
#   test_license.sh SOURCE_DIR
src=$1
. "$(dirname "$0")/lib.sh"
cd "$src" || fail "no source tree at $src"
[ -d .git ] && command -v git >/dev/null || { echo "skipped: not a git checkout"; exit 77; }
grep -q "^BSD 3-Clause License" LICENSE || fail "LICENSE is not the BSD 3-Clause text"
tag="SPDX-License-Identifier: BSD-3-Clause"
missing=$(git ls-files -- '*.c' '*.h' '*.cc' '*.py' '*.sh' '*.cmake' '*.in' '*.toml' 'CMakeLists.txt' '*/CMakeLists.txt' .ci/run |
    grep -v '^docs/' | while read -r f; do head -2 "$f" | grep -q "$tag" || echo "$f"; done)
[ -z "$missing" ] || fail "these files lack '$tag' in their first two lines:
$missing"
grep -q "^License: BSD-3-Clause" cmake/collie.pc.in || fail "collie.pc names no license"
grep -q 'collie_LICENSE "@COLLIE_LICENSE@"' cmake/collieConfig.cmake.in || fail "the CMake package names no license"
grep -q '^license = { file = "LICENSE" }' pyproject.toml && grep -q 'License :: OSI Approved :: BSD License' pyproject.toml || fail "the Python package names no license"
echo "license: ok ($(git ls-files | wc -l) files in the tree)"
