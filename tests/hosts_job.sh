# SPDX-License-Identifier: BSD-3-Clause
# hosts_job.sh - starting one job's ranks on emulated hosts (netns.sh), the
# way a cluster manager would: each rank gets COLLIE_RANK/SIZE, the
# rendezvous at host 0, and COLLIE_HOST naming its emulated host (the
# namespaces share one kernel, so collie would otherwise see one host).
#   hosts_job "2,1,3" CMD...   2 ranks on host 0, 1 on host 1, 3 on host 2 (filled in
#                              order); waits for all; returns the first failing status;
#                              every rank's output goes to the file $job_out (a fresh
#                              temporary file unless job_out is set)
hosts_job_port=29500
hosts_job() {
    local placement=$1 h r=0 n=0 c rc pids=() counts status=0
    shift
    IFS=, read -ra counts <<< "$placement"
    for c in "${counts[@]}"; do n=$((n + c)); done
    job_out=${job_out:-$(mktemp)}
    for h in "${!counts[@]}"; do
        for _ in $(seq 1 "${counts[$h]}"); do
            netns_exec "$h" env COLLIE_ALGO="${COLLIE_ALGO:-}" COLLIE_RANK=$r COLLIE_SIZE=$n COLLIE_HOST="emulated-$h" \
                COLLIE_ADDR="$(netns_addr 0):$hosts_job_port" COLLIE_TOKEN="${COLLIE_TOKEN:-test-token}" \
                "$@" >> "$job_out" 2>&1 &
            pids+=($!)
            r=$((r + 1))
        done
    done
    for c in "${pids[@]}"; do
        wait "$c"
        rc=$?
        [ $rc != 0 ] && [ $status = 0 ] && status=$rc
    done
    hosts_job_port=$((hosts_job_port + 1))
    return $status
}
