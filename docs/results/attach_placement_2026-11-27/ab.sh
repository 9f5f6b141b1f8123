#!/bin/bash
# (recorded for docs/PERFORMANCE.md, *Single copies at any alignment*: /tmp/old held the build before, /work/main the one after)
# ab.sh ROUNDS N : old/new alternated over the placement cases
rounds=$1 n=$2
for r in $(seq 1 $rounds); do for side in /tmp/old /work/main; do
 for c in "SEND_OFF=0 RECV_OFF=0|allreduce" "SKEW_RANK=1 RECV_OFF=16|allreduce" "SEND_OFF=0 RECV_OFF=16|allgather" "SEND_OFF=16 RECV_OFF=16|allreduce"; do
  envs=${c%|*} coll=${c#*|}
  echo "[$envs $coll] $r $(basename $side) $(LD_LIBRARY_PATH=$side/build $side/build/collie run -n $n env $envs ./skew_loop $coll 65536 1048576 4194304)"
 done; done; done | sort -s -t']' -k1,1
