#!/bin/bash
set -u
root=$(pwd); D=$root/.dev; O=${OUT:-/tmp/out}; mkdir -p "$O/r"
export PATH=$D/bin:$PATH COLLIE=$D/bin/collie COLLIE_PYTHON=$(command -v python3)
ln -sf "$(command -v python3)" /usr/bin/python3 2>/dev/null
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
for k in 1 2; do
  timeout -k 5 90 bash scripts/sim_validate.sh "$O/r/local$k" local:2 local:4 local:8 local:16 > "$O/r/local$k.log" 2>&1
  echo "== local$k rc $? at $(el) s"; tail -6 "$O/r/local$k.log"; pkill -9 -f "$D/bin/collie"
done
for n in 8 16; do for a in staged direct adaptive; do
  timeout -k 5 20 $COLLIE bench -n $n allgather -b 16K -e 16K --iters 200 --algo allgather:$a 2>&1 | grep -E "^ +16384"
done; done | tee "$O/r/allgather16k.txt"
echo "== allgather at $(el) s"
timeout -k 5 50 $COLLIE bench -n 8 allreduce -b 4 -e 64M -f 16 --iters 20 --warmup 3 --baseline torch --csv "$O/r/torch8.csv" > "$O/r/torch8.txt" 2>&1; echo "== torch8 rc $? at $(el) s"; grep -v "^#" "$O/r/torch8.txt" | tail -8
timeout -k 5 60 $COLLIE bench -n 16 allreduce -b 4 -e 64M -f 16 --iters 20 --warmup 3 --baseline torch --csv "$O/r/torch16.csv" > "$O/r/torch16.txt" 2>&1; echo "== torch16 rc $? at $(el) s"; grep -v "^#" "$O/r/torch16.txt" | tail -8
tar czf "$O/r.tgz" -C "$O" r && rm -rf "$O/r"; echo "total $(el) s"
