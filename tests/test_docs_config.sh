#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/CONFIGURATION.md is what the configuration table says: the page is
# `collie info --config-markdown`'s output, unchanged.
#   test_docs_config.sh COLLIE SOURCE_DIR
collie=$1 src=$2
. "$(dirname "$0")/lib.sh"
page="$src/docs/CONFIGURATION.md"
[ -f "$page" ] || fail "no $page"
expect_status 0 env -u COLLIE_DEBUG "$collie" info --config-markdown
generated=$out
grep -q '^| `COLLIE_TIMEOUT` | seconds |' <<<"$generated" || fail "the reference lacks COLLIE_TIMEOUT's row:
$generated"
if ! diff -u "$page" <(printf '%s\n' "$generated") >/dev/null; then
    fail "docs/CONFIGURATION.md differs from the configuration table; regenerate it with
  build/collie info --config-markdown > docs/CONFIGURATION.md
$(diff -u "$page" <(printf '%s\n' "$generated") | head -40)"
fi
echo "docs.config: ok ($(grep -c '^| `COLLIE_' "$page") variables)"
