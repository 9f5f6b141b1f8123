#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The newest PyTorch 2.x from the package index, in a virtual environment kept
# outside the clone and reused while it holds what is asked below; prints its python.
#   torch_env.sh            makes it if missing (about 90 s and 5.5 GB: torch's wheel
#                           carries its CUDA libraries, which `import torch` needs)
#   torch_env.sh --check    prints it if it is there, else nothing (status 1)
# COLLIE_TORCH_ENV names the folder (default ~/.cache/collie/torch2).  Debian's own
# torch 1.13 (/usr/bin/python3) is untouched: the tests run on both.
set -euo pipefail
env=${COLLIE_TORCH_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/collie/torch2}
# torchvision: collie.torch.benchmark's models; scikit-build-core: building the wheel
# without fetching the backend (pip --no-build-isolation), as the tests do.
wants="torch>=2,<3 torchvision numpy scikit-build-core"
stamp=$env/.collie-wants
if [ -x "$env/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wants" ]; then
    echo "$env/bin/python"
    exit 0
fi
[ "${1:-}" != --check ] || exit 1
echo "collie: installing $wants into $env (once; about 90 s)" >&2
rm -rf "$env"
mkdir -p "$(dirname "$env")"
/usr/bin/python3 -m venv "$env" >&2
# shellcheck disable=SC2086  # one word per requirement
"$env/bin/pip" install -q --disable-pip-version-check $wants >&2
"$env/bin/python" -c "import torch, torchvision, numpy, scikit_build_core" >&2
echo "$wants" > "$stamp"
echo "$env/bin/python"
