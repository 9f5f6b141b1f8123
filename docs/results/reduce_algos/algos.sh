#!/bin/bash
# algos.sh OUTDIR ROUNDS COLL N SIZES... ; each round runs every algo (and the model) once
out=$1 rounds=$2 coll=$3 n=$4; shift 4
mkdir -p $out
for r in $(seq $rounds); do
  for a in "$@"; do
    if [ $a = model ]; then
      /work/main/build/collie bench $coll -n $n -b 16K -e 4M -f 4 --iters 50 > $out/$coll.$n.$a.$r.txt 2>&1
    else
      /work/main/build/collie bench $coll -n $n -b 16K -e 4M -f 4 --iters 50 --algo $coll:$a > $out/$coll.$n.$a.$r.txt 2>&1
    fi
  done
done
