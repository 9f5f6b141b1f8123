#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the Debian packages collie builds and tests with, if any is missing.
# Needs root (or sudo) only when something has to be installed.
#   deps.sh          the build: compiler, cmake
#   deps.sh --bench  also Open MPI (collie bench --baseline mpi), Gloo (--baseline gloo),
#                    gnuplot (--plot) and iproute2 (ip netns and tc: the emulated hosts of
#                    the tests), iperf3 (the link rate between them)
#   deps.sh --test   --bench's, clang-format (the tests check the formatting), clang and
#                    libclang-rt-14-dev (libFuzzer: the fuzzing harnesses), procps (ps, pgrep)
#                    python3 (the tests read the timeline's JSON), and numpy, PyTorch, pip and
#                    venv (the Python package and the torch.distributed backend; the
#                    environment of torch 2.x that scripts/torch_env.sh makes),
#                    torchvision (collie.torch.benchmark's models) and mpi4py (the MPI
#                    interposer's test with a program nobody here wrote), nftables (the
#                    encrypted-link test's man in the middle), Slurm and munge (the
#                    launch test's cluster) with Slurm's PMI-2 library
# libopenblas-dev, zlib1g-dev and the data set are for collie-train only
# (COLLIE_BUILD_TRAIN=ON, the default).
set -euo pipefail
packages=(build-essential cmake pkg-config libssl-dev libopenblas-dev zlib1g-dev dataset-fashion-mnist)
case "${1:-}" in
--bench) packages+=(openmpi-bin libopenmpi-dev libgloo-dev gnuplot-nox iproute2 iperf3) ;;
--test) packages+=(openmpi-bin libopenmpi-dev libgloo-dev gnuplot-nox iproute2 iperf3 clang-format
             clang libclang-rt-14-dev
             procps python3 python3-numpy python3-torch python3-torchvision python3-pip python3-venv git
             python3-mpi4py nftables slurmctld slurmd slurm-client munge libpmi2-0) ;;
esac
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "collie: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
