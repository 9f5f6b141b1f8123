#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The simulator's validation (docs/SCALE.md): for each machine, `collie bench
# --tune` measures its rates once, `collie bench` measures every collective
# (the library's choice, and each algorithm forced where there is a choice),
# `collie sim` predicts the same rows from the tuned description, and
# scripts/sim_compare.py puts them side by side.
#   bash scripts/sim_validate.sh OUT_DIR CONFIG...
# CONFIG: local:N (N ranks on this host), or hosts:H:L[:RATE] (H emulated hosts
# of L ranks, links shaped to RATE with tc tbf; needs root).  e.g.
#   bash scripts/sim_validate.sh /tmp/v local:2 local:4 local:8 hosts:2:1:1gbit hosts:4:2
# One host is tuned once, at its largest N, and predicts every N; each host
# configuration is tuned on itself (which finds its hosts on one machine's
# cores: shared_cores) and predicted with the rate and the latency at which
# those cores carry TCP (shared_tcp_gbs and shared_tcp_us, from two unshaped
# hosts: docs/SCALE.md).  Writes
# OUT_DIR/validation.csv and a per-configuration text file, and prints the
# summary.  VALIDATE_ROUNDS (default 3): the rounds each configuration's runs
# alternate.
#   bash scripts/sim_validate.sh --repredict OUT_DIR RUN_DIR...
# predicts stored runs again with this build's model, from each run's own
# tuned descriptions, and scores them: a change to the model judged on the
# measurements already made, beside the build before it.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
collie=${COLLIE:-$root/build/collie}
repredict=
[ "${1:-}" = --repredict ] && repredict=1 && shift
out=$1
shift
mkdir -p "$out"
header="config,coll,size,measured_us,predicted_us,error,sim_algo,fastest,same,near,state"
export SIM_VALIDATION=$out/validation.csv
echo "$header" >"$SIM_VALIDATION"
sizes=(-b 4 -e 64M -f 16)
colls=all
rounds=${VALIDATE_ROUNDS:-3}

# gather PART.csv ALL.csv: a round's rows onto those of the rounds before
gather() {
    if [ -s "$2" ]; then tail -n +2 "$1" >>"$2"; else cp "$1" "$2"; fi
    rm -f "$1"
}

# compare LABEL DIR RANKS MACHINE BENCH...: the bench runs, then the prediction.
# The library's choice and every forced algorithm run in turn, round after
# round (A B C A B C: the machine's state moves within minutes, docs/SCALE.md),
# and sim_compare.py takes each row's median over the rounds.
compare() {
    local label=$1 dir=$2 n=$3 machine=$4 r pair
    shift 4
    local forced=()
    for pair in "${algos[@]}"; do
        [ -n "$pair" ] && forced+=("$dir/$pair.csv") && rm -f "$dir/$pair".{csv,txt}
    done
    rm -f "$dir"/bench.{csv,txt}
    for ((r = 1; r <= rounds; r++)); do
        "$@" $colls "${sizes[@]}" --csv "$dir/round.csv" >>"$dir/bench.txt" || return 1
        gather "$dir/round.csv" "$dir/bench.csv"
        for pair in "${algos[@]}"; do
            [ -n "$pair" ] || continue
            "$@" "${pair%%:*}" "${sizes[@]}" --algo "$pair" --csv "$dir/round.csv" \
                >>"$dir/$pair.txt" || return 1
            gather "$dir/round.csv" "$dir/$pair.csv"
        done
    done
    predict "$label" "$dir" "$dir" "$n" "$machine" "${forced[@]}" | tee "$out/$label.txt"
}

# predict LABEL RUN_DIR SIM_DIR RANKS MACHINE FORCED...: collie sim's rows beside the
# measured ones in RUN_DIR (bench.csv, and the forced runs' files)
predict() {
    local label=$1 dir=$2 sim=$3 n=$4 machine=$5
    shift 5
    "$collie" sim $colls "${sizes[@]}" --machine "$machine" --ranks "$n" ${hosts_args:-} \
        --csv "$sim/sim.csv" >"$sim/sim.txt" || return 1
    /usr/bin/python3 "$root/scripts/sim_compare.py" "$label" "$dir/bench.csv" "$sim/sim.csv" "$@"
}

# repredict RUN_DIR...: each stored run predicted again into $out/1, $out/2, ...; its
# configurations from the directories sim_validate.sh left (localN, hostsHxL[_RATE])
repredict() {
    local k=0 run dir label n b forced configs
    for run in "$@"; do
        k=$((k + 1))
        configs=0
        mkdir -p "$out/$k"
        export SIM_VALIDATION=$out/$k/validation.csv
        echo "$header" >"$SIM_VALIDATION"
        for dir in "$run"/local* "$run"/hosts*; do
            [ -f "$dir/bench.csv" ] || continue
            label=$(basename "$dir")
            configs=$((configs + 1))
            forced=("$dir"/*:*.csv)
            [ -e "${forced[0]}" ] || forced=()
            mkdir -p "$out/$k/$label"
            if [[ $label == local* ]]; then
                hosts_args=
                predict "$label" "$dir" "$out/$k/$label" "${label#local}" "$run/local.machine" \
                    "${forced[@]}" >"$out/$k/$label.txt" || return 1
            else
                IFS=x read -r n b <<<"${label#hosts}"
                hosts_args="--hosts $n $(tcp_sets_of "$run/tcp.machine")"
                predict "$label" "$dir" "$out/$k/$label" $((n * ${b%%_*})) "$dir/machine" \
                    "${forced[@]}" >"$out/$k/$label.txt" || return 1
            fi
        done
        if [ "$configs" = 0 ]; then
            echo "sim_validate.sh: $run holds no configuration of a validation run" \
                "(localN or hostsHxL directories with a bench.csv)" >&2
            return 2
        fi
        echo "# $k: $run"
        /usr/bin/python3 "$root/scripts/sim_compare.py" --summary "$SIM_VALIDATION" |
            tee "$out/$k/summary.txt"
    done
    [ "$k" -gt 1 ] &&
        /usr/bin/python3 "$root/scripts/sim_compare.py" --across "$out"/*/validation.csv
    return 0
}

# tcp_sets_of MACHINE: a description's link rate and latency as the shared-TCP --set options
tcp_sets_of() {
    awk '$1 == "link_bandwidth_gbs" { gbs = $3 } $1 == "link_latency_us" { us = $3 }
         END { print "--set shared_tcp_gbs=" gbs " --set shared_tcp_us=" us }' "$1"
}

# The rate at which this machine's cores carry TCP, sending and receiving at
# once, and a message's CPU time: what `--tune` solves for the link of two
# unshaped emulated hosts of one rank each (their ranks on cores of their
# own), as --set options.  Shaped links hide both.
shared_tcp() {
    (
        . "$root/tests/netns.sh"
        netns_up 2 >&2
        trap netns_down EXIT
        netns_rsh "$out/tcp.rsh"
        netns_exec 0 "$collie" bench -H "$(netns_hostlist 2 1)" --rsh "$out/tcp.rsh" \
            --tune "$out/tcp.machine" >"$out/tcp.tune.txt" || exit 1
        tcp_sets_of "$out/tcp.machine"
    )
}
if [ -n "$repredict" ]; then
    repredict "$@"
    exit
fi

tcp_sets=

local_max=0
for c in "$@"; do
    case $c in local:*) [ "${c#local:}" -gt "$local_max" ] && local_max=${c#local:} ;; esac
done
if [ "$local_max" -gt 0 ]; then
    "$collie" bench -n "$local_max" --tune "$out/local.machine" >"$out/local.tune.txt" || exit 1
    cat "$out/local.tune.txt"
fi

for c in "$@"; do
    IFS=: read -r kind a b rate <<<"$c"
    if [ "$kind" = local ]; then
        dir=$out/local$a
        mkdir -p "$dir"
        # every algorithm the model weighs on one host; adaptive too, which picks one of
        # two in the call: where the model chooses it, its own time is what counts
        algos=(allreduce:oneshot allreduce:twoshot allreduce:direct allreduce:adaptive
               broadcast:staged broadcast:direct broadcast:tree broadcast:adaptive
               reduce:oneshot reduce:twoshot reduce:direct reduce:tree reduce:adaptive
               allgather:staged allgather:direct allgather:adaptive
               reduce_scatter:staged reduce_scatter:direct reduce_scatter:adaptive
               alltoall:staged alltoall:direct alltoall:pairwise alltoall:adaptive)
        # (direct and adaptive need cross-memory attach: forced where the kernel refuses
        # it, init fails)
        if ! "$collie" info | grep -q "cross-memory attach between this host's ranks: on"; then
            algos=("${algos[@]/*:direct/}")
            algos=("${algos[@]/*:adaptive/}")
        fi
        hosts_args=
        compare "local$a" "$dir" "$a" "$out/local.machine" \
            "$collie" bench -n "$a" --iters 20 --warmup 3 --min-time 0.05
    else
        label=hosts${a}x$b${rate:+_$rate}
        dir=$out/$label
        mkdir -p "$dir"
        # the emulated hosts share this machine's cores (--tune sees one kernel), and
        # at the links' rates where they are unshaped; shaped, their TCP's are others
        [ -n "$tcp_sets" ] || tcp_sets=$(shared_tcp) || exit 1
        (
            . "$root/tests/netns.sh"
            netns_up "$a" "$rate"
            trap netns_down EXIT
            netns_rsh "$dir/rsh"
            list=$(netns_hostlist "$a" "$b")
            run() { netns_exec 0 "$collie" bench -H "$list" --rsh "$dir/rsh" "$@"; }
            run --tune "$dir/machine" >"$dir/tune.txt" || exit 1
            cat "$dir/tune.txt"
            algos=(allreduce:ring allreduce:rd allreduce:rabenseifner allreduce:hierarchical
                   reduce:ring reduce:rd)
            hosts_args="--hosts $a $tcp_sets" # --tune sets shared_cores
            # small sizes timed for 20 ms each: 3 operations of 50 us are one scheduler tick
            compare "$label" "$dir" $((a * b)) "$dir/machine" run --iters 3 --warmup 1 \
                --min-time 0.02
        ) || exit 1
    fi
done

/usr/bin/python3 "$root/scripts/sim_compare.py" --summary "$SIM_VALIDATION" | tee "$out/summary.txt"
