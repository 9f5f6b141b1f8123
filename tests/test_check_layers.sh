#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# scripts/check_layers.sh passes on the tree, and fails, naming the file and
# the rule, on each kind of upward include planted in a copy of it.
src=$1
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expect_status 0 bash "$src/scripts/check_layers.sh" "$src"
expect_output "layering: ok"

# plant FILE AFTER-LINE INCLUDE EXPECTED: a fresh copy with one bad include must fail.
plant() {
    rm -rf "$tmp/t" && mkdir "$tmp/t" && cp -r "$src/src" "$src/include" "$src/tools" "$src/train" "$tmp/t/"
    sed -i "0,/$2/s||&\n#include \"$3\"|" "$tmp/t/$1"
    grep -q "#include \"$3\"" "$tmp/t/$1" || fail "could not plant $3 in $1"
    expect_status 1 bash "$src/scripts/check_layers.sh" "$tmp/t"
    expect_output "$4"
}
plant src/core/comm.c '#include "log.h"' ../coll/algo.h "src/core/comm.c:.*coll/algo.h is a higher layer"
plant src/transport/xfer.c '#include "transport.h"' ../api/api.h "xfer.c:.*api/api.h is a higher layer"
plant src/transport/tcp.c '#include "net.h"' xfer.h "tcp.c:.*must not call the engine above it"
plant tools/info.c '#include "tools.h"' core/comm.h "tools/info.c:.*collie.h and src/api/tools_api.h only"
plant train/trainer.c '#include "trainer.h"' ../src/api/tools_api.h "only tools/ may use the tools' API"
plant tools/bench/driver.c '#include "bench.h"' ../tools.h "tools/bench/driver.c:.*a tools folder above this one"
plant tools/common/plot.c '#include "plot.h"' ../bench/bench.h "tools/common/plot.c:.*a tools folder above this one"
plant include/collie.h '#include <stddef.h>' ../src/core/op.h "the public header is self-contained"
echo "check_layers: ok"
