#!/bin/bash
# ab.sh N COLL...: old (HEAD) and new builds alternated, 3 rounds; median us per size
n=$1; shift
for r in 1 2 3; do for c in "$@"; do for b in old new; do
  bin=/work/main/build/collie; [ $b = old ] && bin=/tmp/exp/build/collie
  $bin bench $c -n $n -b 64K -e 16M -f 4 --iters 20 --warmup 2 2>&1 | grep -v "^#" | awk -v c=$c -v b=$b -v r=$r '{printf "%s %s %s %s %s %s %s\n", r, c, b, $1, $6, $8, $NF}'
done; done; done
