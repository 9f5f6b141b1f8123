#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The Python package as a user gets it, from a copy of the source tree as a clone has it:
# `pip install .` and `pip wheel .` (scikit-build-core builds libcollie.so into the
# wheel) in a fresh virtual environment that sees torch 2.x (scripts/torch_env.sh's,
# PYTHON); the wheel holds the package, its library and its metadata (name collie-comm,
# the library's version, the entry point); then tests/python/table.py, every call that
# had failed on collie under torch 2.x, under torch's own torchrun (python -m
# torch.distributed.run) at 2 and 3 ranks with no PYTHONPATH, no COLLIE_LIBRARY and no
# import of collie, gives what Gloo gives; and the same wheel installed beside
# Debian's torch 1.13 runs a DDP job there.
#   test_wheel.sh COLLIE SOURCE_TREE PYTHON
collie=$(readlink -f "$1") src=$(readlink -f "$2") python=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
[ -x "$python" ] || { echo "skipped: no $python (bash scripts/torch_env.sh makes it)"; exit 77; }
"$python" -c "import torch, scikit_build_core" 2>/dev/null ||
    { echo "skipped: $python lacks torch or scikit-build-core"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
unset PYTHONPATH COLLIE_LIBRARY
tree=$dir/tree
mkdir -p "$tree"
(cd "$src" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$tree") ||
    fail "cannot copy the source tree"

# A fresh environment that sees the cached torch (5 GB: not installed again).
/usr/bin/python3 -m venv "$dir/v" || fail "cannot make a virtual environment"
"$python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > \
    "$("$dir/v/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/torch2.pth"
pip=("$dir/v/bin/python" -m pip -q --disable-pip-version-check)
expect_status 0 "${pip[@]}" wheel --no-deps --no-build-isolation --config-settings build-dir="$dir/skbuild" \
    -w "$dir/wheels" "$tree"
expect_status 0 "${pip[@]}" install --no-deps --no-build-isolation --config-settings build-dir="$dir/skbuild" "$tree"
version=$(sed -n 's/^#define COLLIE_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' \
    "$tree/include/collie.h" | paste -sd.)
wheel=$(ls "$dir"/wheels/collie_comm-"$version"-py3-none-*.whl 2>/dev/null) ||
    fail "no collie_comm-$version-py3-none-*.whl: $(ls "$dir/wheels")"
"$dir/v/bin/python" - "$wheel" "$version" <<'PY' || fail "the wheel's contents"
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
for need in ["collie/__init__.py", "collie/libcollie.so", "collie/torch/backend.py",
             "collie/torch/hooks.py"]:
    assert need in names, (need, names)
assert not any("a6000" in n for n in names), names  # the study is an example, not the package
meta = zipfile.ZipFile(sys.argv[1]).read(
    [n for n in names if n.endswith(".dist-info/METADATA")][0]).decode()
assert "Name: collie-comm" in meta and "Version: %s" % sys.argv[2] in meta, meta[:400]
eps = zipfile.ZipFile(sys.argv[1]).read(
    [n for n in names if n.endswith(".dist-info/entry_points.txt")][0]).decode()
assert "[torch.distributed.backends]" in eps and "collie = collie.torch:register" in eps, eps
print("wheel: %d files, collie-comm %s" % (len(names), sys.argv[2]))
PY

cd "$dir" || fail "cd $dir"
table=$here/table.py
for n in 2 3; do
    for backend in gloo collie cpu:collie,cuda:gloo; do
        expect_status 0 timeout 300 "$dir/v/bin/python" -m torch.distributed.run --standalone --nproc_per_node "$n" \
            "$table" "$backend" "$dir/$n-$backend.json"
    done
    for backend in collie cpu:collie,cuda:gloo; do
        "$dir/v/bin/python" - "$dir/$n-gloo.json" "$dir/$n-$backend.json" "$dir/v" "$version" <<'PY' ||
import json, sys
gloo, mine = (json.load(open(p)) for p in sys.argv[1:3])
where, version = mine.pop("collie package")
assert where.startswith(sys.argv[3]) and version == sys.argv[4], (where, version)
assert sorted(mine) == sorted(gloo), (sorted(mine), sorted(gloo))
for call in gloo:
    assert len(mine[call]) == len(gloo[call]), call
    assert all(abs(a - b) <= 1e-4 for a, b in zip(mine[call], gloo[call])), \
        (call, mine[call], gloo[call])
print("%d calls as on Gloo: %s" % (len(gloo), ", ".join(gloo)))
PY
            fail "$backend at $n ranks differs from Gloo"
    done
done

# The same wheel beside Debian's torch 1.13 (no build: the wheel holds the library).
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
    /usr/bin/python3 -m venv --system-site-packages "$dir/d" || fail "cannot make a venv"
    expect_status 0 "$dir/d/bin/python" -m pip -q install --no-deps --no-index "$wheel"
    cat > "$dir/ddp.py" <<'PY'
import collie, collie.torch, sys, torch, torch.distributed as dist
assert collie.__file__.startswith(sys.argv[1]), collie.__file__
dist.init_process_group("collie")
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 2))
model(torch.ones(3, 4)).sum().backward()
t = torch.ones(5)
dist.all_reduce(t)
assert (t == dist.get_world_size()).all(), t
dist.destroy_process_group()
print("torch %s: ok" % torch.__version__)
PY
    expect_status 0 "$collie" run -n 2 "$dir/d/bin/python" "$dir/ddp.py" "$dir/d"
    expect_output "torch 1.13"
fi
echo "wheel: ok"
