#!/bin/bash
set -u
root=$(pwd); D=$root/.dev; O=${OUT:-/tmp/out}; mkdir -p "$O/q"
export PATH=$D/bin:$PATH COLLIE=$D/bin/collie
ln -sf "$(command -v python3)" /usr/bin/python3 2>/dev/null
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
for k in 1 2; do
  [ "$k" = 1 ] || [ "$(el)" -lt 75 ] || break
  timeout -k 5 75 bash scripts/sim_validate.sh "$O/q/local$k" local:2 local:4 local:8 local:16 > "$O/q/local$k.log" 2>&1
  echo "== local$k rc $? at $(el) s"; head -9 "$O/q/local$k/local.tune.txt"; tail -6 "$O/q/local$k.log"; pkill -9 -f "$D/bin/collie"
done
tar czf "$O/q.tgz" -C "$O" q && rm -rf "$O/q"; echo "total $(el) s"
