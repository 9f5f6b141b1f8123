#!/bin/bash
# run.sh ROUNDS: forced algorithms at 16K-256K, 2 ranks, alternating, CSV per run
c=${COLLIE:-build/collie}
for r in $(seq $1); do
  for spec in allreduce:oneshot allreduce:twoshot allreduce:direct reduce:oneshot reduce:direct alltoall:staged alltoall:direct; do
    coll=${spec%%:*}
    $c bench $coll -n 2 -b 16K -e 256K -f 4 --iters 50 --algo $spec --csv $spec.$r.csv > /dev/null 2>&1
  done
done
