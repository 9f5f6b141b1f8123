#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# collie bench: the check finds wrong results, every collective and dtype
# checks clean, CSV/JSON hold every row, MLBench sizes, the MPI baseline and
# the plot (each where its package is installed; said so when skipped).
collie=$1
. "$(dirname "$0")/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
quick=(--iters 2 --warmup 1)

expect_status 0 "$collie" bench -n 2 -b 8 -e 64K "${quick[@]}" --csv "$dir/a.csv" --json "$dir/a.json"
expect_output "size\(B\) +count +type +redop +time\(us\) +median\(us\) +busbw\(GB/s\)( +cpu2cpu\(ns\))? +#wrong"
expect_output "^ +65536 +16384 +float32 +sum .* 0  (oneshot|twoshot|direct|adaptive)$"
expect_output "# Avg bus bandwidth +: [0-9.]+"
rows=$(printf '%s\n' "$out" | grep -cE '^ +[0-9]+ ')
[ "$rows" = 14 ] || fail "8 B .. 64 KiB by 2 should be 14 rows, got $rows"
[ "$(tail -n +2 "$dir/a.csv" | wc -l)" = 14 ] || fail "CSV should hold 14 rows: $(cat "$dir/a.csv")"
head -1 "$dir/a.csv" | grep -q "^backend,collective,round,ranks,ranks_per_host,bytes,count,dtype,op,inplace,time_us,median_us,algbw_GBps,busbw_GBps,wrong,algo,cpu,cores,collie_version,handoff_ns,floor_us$" \
    || fail "CSV header: $(head -1 "$dir/a.csv")"
[ "$(grep -c '"backend": "collie"' "$dir/a.json")" = 14 ] || fail "JSON should hold 14 rows"
grep -q '"machine": {"cpu": ".*", "cores": [0-9]*, "ranks_per_host": 2' "$dir/a.json" || fail "JSON machine: $(head -3 "$dir/a.json")"

# the check is real: a corrupted result is counted, on the row it belongs to
expect_status 0 "$collie" bench -n 2 -b 1K -e 1K "${quick[@]}" --corrupt
expect_output "^ +1024 +256 +float32 +sum .* +1  (oneshot|twoshot|direct)$"

# every collective, in and out of place, on odd rank counts and reduced dtypes (two of
# them under the sanitizers: the library's own tests take every dtype there)
dtypes="float32 float16 bfloat16 int8 int64"
[ -n "${COLLIE_TEST_SANITIZED:-}" ] && dtypes="float32 bfloat16"
for dtype in $dtypes; do
    for place in "" --inplace; do
        expect_status 0 "$collie" bench all -n 3 -b 24 -e 96K -f 4 "${quick[@]}" --dtype $dtype $place --op max
        wrong=$(printf '%s\n' "$out" | grep -E '^ +[0-9]+ ' | awk '{print $(NF-1)}' | sort -u | tr '\n' ' ')
        [ "$wrong" = "0 " ] || fail "$dtype $place: #wrong column is '$wrong': $out"
        [ "$(printf '%s\n' "$out" | grep -c '^# collie bench')" = 6 ] || fail "six tables expected: $out"
    done
done
expect_status 0 "$collie" bench reduce -n 4 --root 3 --op avg -b 1K -e 1M -f 32 "${quick[@]}"
[ -z "$(printf '%s\n' "$out" | grep -E '^ +[0-9]+ ' | awk '$(NF-1) != 0')" ] || fail "reduce avg: $out"

# the algo column names what the library ran (its INFO line; a job a size, as the line is
# logged once per algorithm): the choice by the bytes the call takes, a block of these
for coll in allgather reduce_scatter alltoall; do
    for size in 4096 16384 262144; do
        COLLIE_DEBUG=INFO expect_status 0 "$collie" bench $coll -n 4 -b $size -e $size "${quick[@]}"
        ran=$(printf '%s\n' "$out" | grep -Eo "rank 0\] INFO  coll: $coll of $((size / 4)) bytes on 4 ranks: [a-z]+")
        [ -n "$ran" ] || fail "$coll at $size B: no INFO line names a choice: $out"
        printf '%s\n' "$out" | grep -Eq "^ +$size .* ${ran##* }$" || fail "$coll at $size B ran ${ran##* }: $out"
    done
done

# as the ranks of a job launched by someone else: one table, from rank 0
expect_status 0 "$collie" run -n 2 "$collie" bench -b 8 -e 64 "${quick[@]}"
[ "$(printf '%s\n' "$out" | grep -c '^# collie bench allreduce: 2 ranks')" = 1 ] || fail "rank mode: $out"
expect_output "^ +64 +16 +float32 +sum .* 0  oneshot$"

# a progress line on a terminal, none on a pipe
if command -v script >/dev/null; then
    tty_out=$(script -qec "'$collie' bench -n 1 -b 8 -e 64 ${quick[*]}" /dev/null </dev/null 2>&1)
    printf '%s' "$tty_out" | grep -q "collie allreduce: size 4 of 4" || fail "no progress on a terminal: $tty_out"
    expect_status 0 "$collie" bench -n 1 -b 8 -e 64 "${quick[@]}"
    ! printf '%s' "$out" | grep -q "elapsed" || fail "progress printed to a pipe: $out"
fi

# the MLBench sweep: round(logspace(0, 8, 80)) has 77 distinct element counts
expect_status 0 "$collie" bench --sizes mlbench --dry-run
[ "$(printf '%s\n' "$out" | wc -l)" = 77 ] || fail "mlbench sizes: $(printf '%s\n' "$out" | wc -l)"
expect_output "^allreduce 4$"
expect_output "^allreduce 400000000$"
# -b and -e keep the sizes between them, in the driver and in the job it launches
expect_status 0 "$collie" bench --sizes mlbench -e 1K --dry-run
[ "$(printf '%s\n' "$out" | wc -l)" = 21 ] || fail "mlbench sizes to 1 KiB: $out"
expect_status 0 "$collie" bench -n 2 allreduce --sizes mlbench -e 64 --iters 5 --warmup 1 --min-time 0
[ "$(printf '%s\n' "$out" | grep -cE '^ +[0-9]+ +[0-9]+ +float32')" = 10 ] || fail "mlbench to 64 B: $out"
expect_status 0 "$collie" bench -n 2 allreduce --sizes mlbench --dtype int8 -b 70M --iters 1 --warmup 0 --min-time 0
[ "$(printf '%s\n' "$out" | grep -cE '^ +(79201641|100000000) +[0-9]+ +int8 .* 0 +[a-z]+$')" = 2 ] ||
    fail "mlbench from 70 MB (the job must get no -e): $out"

# --rounds: min and max beside the median; rounds over 2x apart are marked and warned about
expect_status 0 env COLLIE_TEST_PROBE_NS=50 COLLIE_TEST_SLOW_ROUND=1 "$collie" bench -n 2 -b 8 -e 64 -f 8 --iters 20 --warmup 1 --rounds 2
expect_output "median\(us\) +min\(us\) +max\(us\)"
expect_output "^ +64 +16 +float32 +sum .*  <- rounds differ > 2x$"
expect_output "collie bench: warning: allreduce: rounds differ by more than 2x at 2 size"
expect_status 0 "$collie" bench -n 2 -b 8 -e 64 -f 8 --iters 20 --warmup 1 --rounds 2 --noise 1
expect_output "^ +64 +16 +float32 +sum "
! printf '%s\n' "$out" | grep -q "cpu2cpu" || fail "--noise holds the CPUs: no probe, no column: $out"

# the machine probe: CPU-to-CPU handoff around every size, in the table and
# the CSV; sizes whose probes read 5x slower (as when the host moves its
# vCPUs apart) are marked and warned about; with rounds, the medians are over
# the rounds measured in the fast state.  The probes read a fixed 50 ns where
# the marks are checked: the host moving its vCPUs would mark sizes too
if [ "$(nproc)" -ge 2 ]; then
    expect_status 0 env COLLIE_TEST_PROBE_NS=50 COLLIE_TEST_SLOW_MACHINE=-1,64 "$collie" bench -n 2 -b 8 -e 512 -f 8 \
        --iters 20 --warmup 1 --csv "$dir/m.csv"
    expect_output "^# machine: a cache line moved between two CPUs in [0-9]+-[0-9]+ ns"
    expect_output "busbw\(GB/s\) cpu2cpu\(ns\) +#wrong"
    expect_output "^ +8 +2 +float32 +sum .* [0-9]+  +0  oneshot$"
    expect_output "^ +64 +16 +float32 +sum .* [0-9]+\* +0  oneshot$"
    expect_output "collie bench: warning: allreduce: the machine slowed down at 2 size"
    head -1 "$dir/m.csv" | grep -q ",collie_version,handoff_ns,floor_us$" || fail "CSV header: $(head -1 "$dir/m.csv")"
    awk -F, 'NR > 1 && $20 > 0 { n++ } END { exit n == 3 ? 0 : 1 }' "$dir/m.csv" ||
        fail "a probe per row in the CSV: $(cat "$dir/m.csv")"
    # warnings on stderr never split a row of the table on stdout (one stream, > 4 KiB of rows)
    expect_status 0 env COLLIE_TEST_SLOW_MACHINE=-1,1024 "$collie" bench all -n 2 -b 8 -e 64K -f 2 "${quick[@]}"
    broken=$(printf '%s\n' "$out" | grep -E '^ +[0-9]+ ' | grep -vE ' [0-9]+  [a-z/]+$' || true)
    [ -z "$broken" ] || fail "rows split by a warning: $broken"
    expect_status 0 env COLLIE_TEST_PROBE_NS=50 COLLIE_TEST_SLOW_MACHINE=1,0 COLLIE_TEST_SLOW_ROUND=1 "$collie" bench -n 2 \
        -b 8 -e 64 -f 8 --iters 20 --warmup 1 --rounds 2
    expect_output "cpu2cpu\(ns\) +rounds +#wrong"
    expect_output "^ +64 +16 +float32 +sum .* [0-9]+  +1/2 +0  oneshot$"
    expect_output "^# note: at 2 size\(s\), rounds measured in the machine's slow state were left out"
    ! printf '%s\n' "$out" | grep -q "rounds differ" || fail "the slow round was left out, not merged: $out"
else
    echo "skipped: the machine probe (one CPU: nothing to pass a cache line to)"
fi

# pingpong: send/recv between pairs, checked; the odd rank out of 3 idles
expect_status 0 "$collie" bench pingpong -n 3 -b 8 -e 32K -f 8 "${quick[@]}"
expect_output "^ +32768 +8192 +float32 +sum .* 0  send/recv$"
# neighbor_allreduce: every topology and both schedules, checked against the
# formula (the dtypes on one: the library's tests take each on every topology);
# the bytes per step beside allreduce's; a corrupted result is counted
for topo in exp2 ring mesh star full onepeer-exp2 onepeer-exact; do
    dtypes=float32
    [ $topo = exp2 ] && dtypes="float32 float64 bfloat16"
    for dtype in $dtypes; do
        expect_status 0 "$collie" bench neighbor_allreduce -n 5 -b 32 -e 1M -f 32 "${quick[@]}" \
            --topology $topo --dtype $dtype
        expect_output "^ +1048576 +[0-9]+ +$dtype +sum .* 0  $topo$"
    done
done
expect_output "^# topology onepeer-exact \(4 steps\): each rank sends at most 1 x the buffer"
expect_status 0 "$collie" bench neighbor_allreduce allreduce -n 4 -b 1K -e 1K "${quick[@]}" --dynamic --corrupt
expect_output "^ +1024 +256 +float32 +sum .* +1  onepeer-exp2$"
expect_output "^ +1024 +256 +float32 +sum .* +1  (oneshot|twoshot|direct)$"
# neighbor_allgather: the in-neighbours' blocks, every byte checked; a corrupted one counted
for topo in exp2 star inner-outer-exp2; do
    dtypes=float32
    [ $topo = exp2 ] && dtypes="float32 int32"
    for dtype in $dtypes; do
        expect_status 0 "$collie" bench neighbor_allgather -n 5 -b 32 -e 1M -f 32 "${quick[@]}" \
            --topology $topo --dtype $dtype
        expect_output "^ +1048576 +[0-9]+ +$dtype +sum .* 0  $topo$"
    done
done
expect_status 0 "$collie" bench neighbor_allgather -n 4 -b 1K -e 1K "${quick[@]}" --corrupt
expect_output "^ +1024 +256 +float32 +sum .* +1  exp2$"
expect_status 2 "$collie" bench neighbor_allgather -n 2 --inplace
expect_output "no in-place form"
# hierarchical: the topology over 2 "hosts" of 3 and 2 ranks (COLLIE_HOST by rank)
expect_status 0 "$collie" run -n 5 sh -c "COLLIE_HOST=h\$((COLLIE_RANK % 2)) COLLIE_DEBUG=NONE exec \
    $collie bench hierarchical_neighbor_allreduce -b 32 -e 1M -f 32 --iters 2 --warmup 1 --topology ring"
expect_output "^ +1048576 +262144 +float32 +sum .* 0  ring$"
expect_output "^# collie bench hierarchical_neighbor_allreduce: 5 ranks \\(3 per host\\)"
expect_status 2 "$collie" bench neighbor_allreduce -n 2 --topology exp1
expect_output "base \\(param\\) must be at least 2"
expect_status 2 "$collie" bench neighbor_allreduce -n 2 --topology torus
expect_output "no topology 'torus' \\(known: exp2"
expect_status 2 "$collie" bench neighbor_allreduce -n 2 --baseline mpi
expect_output "MPI has no neighbour averaging"
expect_status 0 "$collie" bench all -n 2 -b 8 -e 8 "${quick[@]}" --dry-run
printf '%s\n' "$out" | grep -q pingpong && fail "'all' runs the collectives, not pingpong: $out"

# --offset: buffers where the kernel's single copies crawl (1-31 bytes apart modulo 4 KiB),
# every collective checked
expect_status 0 "$collie" bench all -n 3 -b 4K -e 1M -f 16 "${quick[@]}" --offset 0,24
rows=$(printf '%s\n' "$out" | grep -cE '^ +[0-9]+ +[0-9]+ +float32 ')
[ "$rows" = 18 ] || fail "18 rows (6 collectives x 3 sizes), got $rows: $out"
printf '%s\n' "$out" | awk '/^ +[0-9]+ +[0-9]+ +float32 / && $(NF-1) != 0 { bad = 1 } END { exit bad }' ||
    fail "wrong elements at --offset 0,24: $out"
# --hugepages: both buffers 2 MiB-aligned on huge pages, every collective checked
expect_status 0 "$collie" bench all -n 3 -b 4K -e 4M -f 32 "${quick[@]}" --hugepages
rows=$(printf '%s\n' "$out" | grep -cE '^ +[0-9]+ +[0-9]+ +float32 ')
[ "$rows" = 18 ] || fail "18 rows (6 collectives x 3 sizes) with --hugepages, got $rows: $out"
printf '%s\n' "$out" | awk '/^ +[0-9]+ +[0-9]+ +float32 / && $(NF-1) != 0 { bad = 1 } END { exit bad }' ||
    fail "wrong elements with --hugepages: $out"

# usage errors
expect_status 2 "$collie" bench --offset 4096
expect_output "bad value '4096' for --offset"
expect_status 2 "$collie" bench --offset 8,
expect_output "bad value '8,' for --offset"
expect_status 2 "$collie" bench -n 2 --hugepages --baseline torch
expect_output "--hugepages: torch.distributed allocates its own tensors"
expect_status 2 "$collie" bench --dtype float128
expect_output "bad value 'float128' for --dtype"
expect_status 2 env COLLIE_RANK=0 COLLIE_SIZE=1 "$collie" bench -n 2
expect_output "drop -n"

# A sweep stopped midway keeps what it measured: SIGTERM to the driver reaches the
# job, and the table and the CSV hold the sizes done before it (8 B .. 1 GiB: 28).
"$collie" bench -n 2 -b 8 -e 1G --iters 10 --min-time 0.2 --csv "$dir/stopped.csv" \
    >"$dir/stopped.out" 2>"$dir/stopped.err" &
pid=$!
sleep 3
kill -TERM $pid
wait $pid
rc=$?
[ $rc = 143 ] || fail "a stopped sweep should exit 143 (SIGTERM), got $rc: $(cat "$dir/stopped.err")"
grep -qE "stopped by a signal; the table holds the [0-9]+ row" "$dir/stopped.err" ||
    fail "no word of the stop: $(cat "$dir/stopped.err")"
kept=$(grep -cE '^ +[0-9]+ ' "$dir/stopped.out")
[ "$kept" -ge 1 ] && [ "$kept" -lt 28 ] || fail "kept $kept rows: $(cat "$dir/stopped.out")"
[ "$(tail -n +2 "$dir/stopped.csv" | wc -l)" = "$kept" ] || fail "CSV and table differ"

# side by side with MPI
if [ -x "$(dirname "$collie")/collie-bench-mpi" ] && command -v mpirun >/dev/null; then
    expect_status 0 "$collie" bench all -n 2 -b 64 -e 4K -f 8 "${quick[@]}" --baseline mpi --rounds 2 --csv "$dir/b.csv"
    expect_output "mpi_busbw +ratio"
    expect_output "^ +4096 +1024 +float32 +sum .* [0-9./,]+ +0/0  "
    [ "$(grep -c '^mpi,' "$dir/b.csv")" = "$(grep -c '^collie,' "$dir/b.csv")" ] || fail "unequal rows: $(cat "$dir/b.csv")"
    [ "$(grep -c '^mpi,allreduce,1,' "$dir/b.csv")" = 3 ] || fail "round 1 rows missing (64, 512, 4096 B)"
    expect_status 0 "$collie" bench allgather alltoall -n 2 -b 4M -e 4M "${quick[@]}" --baseline mpi --hugepages
    [ "$(printf '%s\n' "$out" | grep -cE '^ +4194304 +1048576 +float32 +sum .* 0/0  [a-z]+$')" = 2 ] ||
        fail "--hugepages beside MPI: two rows, no wrong element: $out"
    expect_status 0 "$collie" bench pingpong -n 2 -b 8 -e 4K -f 8 "${quick[@]}" --baseline mpi
    expect_output "^ +4096 +1024 +float32 +sum .* 0/0  send/recv$"
    expect_status 0 "$collie" bench -n 2 -b 8 -e 64 "${quick[@]}" --baseline mpi --dtype bfloat16 --op avg
    expect_output "^ +64 +32 +bfloat16 +avg .* 0/0  "
else
    echo "skipped: the MPI baseline (collie-bench-mpi not built: apt-get install libopenmpi-dev openmpi-bin)"
fi

# side by side with Gloo, what torch.distributed runs on CPU: every collective
# Gloo has, checked element by element (none of reduce_scatter: "-"), in and
# out of place, on an odd rank count; a corrupted result counted for both
if [ -x "$(dirname "$collie")/collie-bench-gloo" ]; then
    stores() { find /tmp -maxdepth 1 -name 'collie-bench-gloo-*' 2>/dev/null | wc -l; }
    before=$(stores)
    for args in "--dtype float32 --op sum" "--dtype float16 --op max --inplace" "--dtype int64 --op avg"; do
        # shellcheck disable=SC2086
        expect_status 0 "$collie" bench all pingpong -n 3 -b 24 -e 96K -f 4 "${quick[@]}" --baseline gloo $args
        expect_output "gloo_busbw +ratio"
        expect_output "gloo bench: gloo has no reduce_scatter; not measured"
        wrong=$(printf '%s\n' "$out" | grep -E '^ +[0-9]+ ' | awk '{print $(NF-1)}' | sort -u | tr '\n' ' ')
        [ "$wrong" = "0/- 0/0 " ] || fail "gloo $args: #wrong column is '$wrong': $out"
        [ "$(printf '%s\n' "$out" | grep -c '^# collie bench')" = 7 ] || fail "seven tables expected: $out"
    done
    expect_status 0 "$collie" bench -n 2 -b 1K -e 1K "${quick[@]}" --baseline gloo --corrupt
    expect_output "^ +1024 +256 +float32 +sum .* +1/1  (oneshot|twoshot|direct)$"
    # beside MPI in one table, every round of each
    if [ -x "$(dirname "$collie")/collie-bench-mpi" ] && command -v mpirun >/dev/null; then
        expect_status 0 "$collie" bench -n 2 -b 64 -e 4K -f 8 "${quick[@]}" --baseline mpi,gloo --rounds 2 --csv "$dir/g.csv"
        expect_output "mpi_busbw +mpi_ratio +mpi_min +mpi_max +gloo_time +gloo_median +gloo_busbw +gloo_ratio"
        expect_output "^ +4096 +1024 +float32 +sum .* [0-9]+/2,[0-9],[0-9] +0/0/0  "
        expect_output "^# Avg bus bandwidth, gloo: [0-9.]+"
        [ "$(grep -c '^gloo,allreduce,1,' "$dir/g.csv")" = 3 ] || fail "Gloo's round 1 rows: $(cat "$dir/g.csv")"
        [ "$(grep -c '^mpi,allreduce,' "$dir/g.csv")" = 6 ] || fail "MPI's rows: $(cat "$dir/g.csv")"
    fi
    [ "$(stores)" = "$before" ] || fail "the Gloo rendezvous directory was left in /tmp"
    expect_status 2 "$collie" bench -n 2 --baseline gloo --dtype bfloat16
    expect_output "Gloo has no bfloat16"
    expect_status 2 "$collie" bench overlap -n 2 --baseline gloo
    expect_output "overlap is measured beside MPI only"
else
    echo "skipped: the Gloo baseline (collie-bench-gloo not built: apt-get install libgloo-dev g++)"
fi
# torch.distributed on Gloo, as a PyTorch user calls it: every collective it
# has, checked; a corrupted result counted; beside Gloo itself in one table
if /usr/bin/python3 -c "import torch.distributed" 2>/dev/null; then
    for args in "--dtype float16 --op max --inplace" "--dtype int64 --op avg --root 2"; do
        # shellcheck disable=SC2086
        expect_status 0 "$collie" bench all pingpong -n 3 -b 24 -e 96K -f 16 "${quick[@]}" --baseline torch $args
        expect_output "torch_busbw +ratio"
        expect_output "torch bench: torch.distributed on Gloo has no reduce_scatter; not measured"
        wrong=$(printf '%s\n' "$out" | grep -E '^ +[0-9]+ ' | awk '{print $(NF-1)}' | sort -u | tr '\n' ' ')
        [ "$wrong" = "0/- 0/0 " ] || fail "torch $args: #wrong column is '$wrong': $out"
    done
    expect_status 0 env -u OMP_NUM_THREADS "$collie" bench -n 2 -b 1K -e 1K "${quick[@]}" --baseline gloo,torch --corrupt
    expect_output "gloo_ratio +torch_time"
    # one thread a rank, as torchrun sets it (torch's default pool oversubscribes the cores)
    expect_output "torch bench: 1 thread\(s\) a rank \(OMP_NUM_THREADS=1\)"
    expect_output "^ +1024 +256 +float32 +sum .* +1/1/1  (oneshot|twoshot|direct)$"
    expect_status 2 "$collie" bench -n 2 --baseline torch --noise 1
    expect_output "the torch baseline has no noise threads"
    expect_status 1 env COLLIE_PYTHON=/bin/false "$collie" bench -n 2 --baseline torch
    expect_output "--baseline torch needs PyTorch"
else
    echo "skipped: the torch baseline (apt-get install python3-torch)"
fi
# the peers from the package index (scripts/peers_env.sh), each under its own (or, for
# oneCCL, Intel MPI's) mpiexec: every collective of each checked in one table, at 2 and 3 ranks
peers=()
for p in impi mpich ompi5 oneccl; do
    [ -x "$(dirname "$collie")/collie-bench-$p" ] && peers+=("$p")
done
if [ ${#peers[@]} -gt 0 ]; then
    list=$(IFS=,; echo "${peers[*]}")
    for n in 2 3; do
        expect_status 0 "$collie" bench all -n "$n" -b 24 -e 24K -f 32 "${quick[@]}" --baseline "$list" \
            --csv "$dir/peers.csv"
        for p in "${peers[@]}"; do
            expect_output "${p}_busbw +${p}_ratio"
            [ "$(grep -c "^$p," "$dir/peers.csv")" = "$(grep -c '^collie,' "$dir/peers.csv")" ] ||
                fail "$p at $n ranks: not a row for each of collie's: $(cat "$dir/peers.csv")"
        done
        # every library's every element right: the #wrong column reads 0 for each
        zeros=$(printf '0/%.0s' "${peers[@]}")
        wrong=$(printf '%s\n' "$out" | grep -E '^ +[0-9]+ ' | awk '{print $(NF-1)}' | sort -u | tr '\n' ' ')
        [ "$wrong" = "${zeros}0 " ] || fail "peers at $n ranks: #wrong column is '$wrong': $out"
    done
    expect_status 2 "$collie" bench -n 2 -H 127.0.0.1:2 --baseline "${peers[0]}"
    expect_output "runs on one host"
else
    echo "skipped: the peers (bash scripts/peers_env.sh, then rebuild)"
fi
expect_status 1 env COLLIE_BENCH_PEERS="$dir/none" "$collie" bench -n 2 --baseline mpich
expect_output "--baseline mpich needs MPICH installed in $dir/none/mpich \(bash scripts/peers_env.sh"
expect_status 1 env COLLIE_BENCH_PEERS="$dir/none" "$collie" bench -n 2 --baseline oneccl
expect_output "--baseline oneccl needs oneCCL installed in $dir/none/oneccl \(bash scripts/peers_env.sh"

# --baseline names libraries, each once; a missing baseline program says what to install
expect_status 2 "$collie" bench -n 2 --baseline nccl
expect_output "name mpi, gloo, torch, impi, mpich, ompi5 or oneccl, each once"
expect_status 2 "$collie" bench -n 2 --baseline gloo,gloo
expect_output "each once"
cp "$collie" "$dir/collie-alone"
expect_status 1 "$dir/collie-alone" bench -n 2 --baseline gloo
expect_output "collie-bench-gloo was not built: install Gloo \(apt-get install libgloo-dev g\+\+\)"
expect_status 1 "$dir/collie-alone" bench -n 2 --baseline mpi
expect_output "collie-bench-mpi was not built"

# --stream: the memory-traffic floor of allreduce rows from 16 MiB, on the table and in the CSV
expect_status 0 "$collie" bench -n 2 -b 8M -e 16M "${quick[@]}" --min-time 0 --stream --csv "$dir/s.csv"
expect_output "floor%"
expect_output "^ +16777216 .* [0-9]+%"
awk -F, 'NR > 1 { f[$6] = $21 } END { exit f[8388608] == 0 && f[16777216] > 0 ? 0 : 1 }' \
    "$dir/s.csv" || fail "floor_us: 0 at 8 MiB, positive at 16 MiB: $(cat "$dir/s.csv")"

# the plot
expect_status 0 "$collie" bench -n 2 -b 8 -e 4K "${quick[@]}" --plot "$dir/p.png"
[ -s "$dir/p.png.dat" ] || fail "no plot data"
if command -v gnuplot >/dev/null; then
    [ "$(head -c 4 "$dir/p.png" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "not a PNG: $dir/p.png"
else
    expect_output "gnuplot is not installed"
    echo "skipped: drawing the PNG (gnuplot not installed)"
fi
echo "bench: ok"
