#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# `pip install --no-deps --no-build-isolation ./python` from a copy of the
# source tree: the package lands with its own libcollie.so (built by CMake),
# and a job that imports it from there works.
collie=$1 src=$2
. "$(dirname "$0")/../lib.sh"
/usr/bin/python3 -m pip --version >/dev/null 2>&1 || { echo "skipped: no pip (apt-get install python3-pip)"; exit 77; }
/usr/bin/python3 -c "import numpy" 2>/dev/null || { echo "skipped: no numpy"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The tree as a clone has it: tracked and new files, no build output.
tree=$dir/tree
mkdir -p "$tree"
(cd "$src" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$tree") ||
    fail "cannot copy the source tree"
[ -f "$tree/python/setup.py" ] || fail "the copy has no python/setup.py"
ls "$tree/python" >/dev/null
expect_status 0 /usr/bin/python3 -m pip install -q --no-deps --no-build-isolation --target "$dir/site" "$tree/python"
[ -f "$dir/site/collie/libcollie.so" ] || fail "the package holds no libcollie.so: $(ls -R "$dir/site" | head)"
cat > "$dir/job.py" <<'PY'
import collie, collie._lib, numpy as np, sys
assert collie._lib.lib._name.startswith(sys.argv[1]), collie._lib.lib._name
c = collie.init()
x = np.ones(3, np.float32)
c.allreduce(x)
assert (x == c.size).all(), x
c.finalize()
print("installed package: ok")
PY
expect_status 0 env -u COLLIE_LIBRARY PYTHONPATH="$dir/site" "$collie" run -n 2 /usr/bin/python3 "$dir/job.py" "$dir/site/"
expect_output "installed package: ok"
echo "python install: ok"
