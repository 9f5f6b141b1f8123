#!/bin/bash
# Device run: issue 17's validation on a machine whose ranks have cores of their own.
set -u
root=$(pwd)
D=$root/.dev
O=${OUT:-/tmp/out}
mkdir -p "$O/v"
export PATH=$D/bin:$PATH
ldconfig -p | grep -q 'libcrypto.so.3 ' || export LD_LIBRARY_PATH=$D/ssl
[ -x /usr/bin/python3 ] || ln -sf "$(command -v python3)" /usr/bin/python3
export COLLIE=$D/bin/collie
python3 -c "import torch" 2>/dev/null && export COLLIE_PYTHON=$(command -v python3)
t0=$(date +%s)
left() { echo $((${BUDGET:-470} - ($(date +%s) - t0))); }
{
    uname -a; cat /etc/os-release | head -3; nproc; free -g | head -2
    lscpu | grep -E 'Model name|Socket|Thread|Core|NUMA|L3|MHz'
    ldd "$COLLIE"; python3 -c 'import torch; print("torch", torch.__version__)'
    "$COLLIE" info | head -40
} >"$O/env.txt" 2>&1
cat "$O/env.txt"
step() { # step NAME SECONDS CMD...
    local name=$1 s=$2; shift 2
    local l; l=$(left)
    [ "$l" -gt 20 ] || { echo "skip $name: $l s left"; return; }
    [ "$s" -lt "$l" ] || s=$((l - 10))
    echo "== $name ($s s max) at $(($(date +%s) - t0)) s"
    timeout -k 5 "$s" "$@" >"$O/v/$name.log" 2>&1
    echo "== $name rc $? after $(($(date +%s) - t0)) s"
    pkill -9 -f "$D/bin/collie" 2>/dev/null
    for n in $(ip netns list 2>/dev/null | awk '{print $1}'); do ip netns del "$n"; done
    tail -12 "$O/v/$name.log"
}
step local 200 bash scripts/sim_validate.sh "$O/v/local" ${LOCALS:-local:2 local:4 local:8 local:16}
step hosts 180 bash scripts/sim_validate.sh "$O/v/hosts" ${HOSTS:-hosts:2:1 hosts:4:2 hosts:8:2 hosts:8:2:1gbit}
step torch8 45 "$COLLIE" bench -n 8 allreduce -b 4 -e 64M -f 16 --iters 20 --warmup 3 --baseline torch --csv "$O/v/torch8.csv"
step torch16 60 "$COLLIE" bench -n 16 allreduce -b 4 -e 64M -f 16 --iters 20 --warmup 3 --baseline torch --csv "$O/v/torch16.csv"
tar czf "$O/v.tgz" -C "$O" v && rm -rf "$O/v"
echo "total $(($(date +%s) - t0)) s"
