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
. "$(dirname "$0")/venv.sh"
env=${COLLIE_TORCH_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/collie/torch2}
# torchvision: collie.torch.benchmark's models; scikit-build-core: building the wheel
# without fetching the backend (pip --no-build-isolation), as the tests do.
wants="torch>=2,<3 torchvision numpy scikit-build-core"
if ! venv_current "$env" "$wants"; then
    [ "${1:-}" != --check ] || exit 1
    venv_make "$env" "$wants" "$env/bin/python" -c "import torch, torchvision, numpy, scikit_build_core"
fi
echo "$env/bin/python"
