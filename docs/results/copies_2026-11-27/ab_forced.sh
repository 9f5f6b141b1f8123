n=$1; shift
for r in 1 2 3 4 5; do for ca in "$@"; do c=${ca%%:*}; for b in old new; do
  bin=/work/main/build/collie; [ $b = old ] && bin=/tmp/exp/build/collie
  $bin bench $c -n $n -b 64K -e 4M -f 4 --iters 30 --warmup 2 --algo $ca 2>&1 | grep -v "^#" | awk -v c=$ca -v b=$b -v r=$r '{printf "%s %s %s %s %s %s %s\n", r, c, b, $1, $6, $8, $NF}'
done; done; done
