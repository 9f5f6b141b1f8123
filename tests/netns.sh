# SPDX-License-Identifier: BSD-3-Clause
# netns.sh - emulated hosts for the tests: K network namespaces, each an
# "host" with its own address, joined by veth pairs to a bridge that lives in
# a namespace of its own, so that nothing touches the machine's own network.
# Traffic stays inside.  Source it, then:
#   netns_up K [RATE]     hosts 0..K-1 at 10.99.0.(h+1); RATE (e.g. 1gbit): tc tbf on
#                         every host's link, its bucket $netns_burst (default 256kb,
#                         that of every figure in docs/; from 1 Gbit/s it is under
#                         tc-tbf(8)'s rate/HZ, and on a busy machine, where the hosts'
#                         packets can go once a 4 ms tick, such a link carries 256 KB a
#                         tick: 0.066 GB/s);
#                         exits 77 (skipped) if namespaces cannot be made
#   netns_up_routed       hosts 0 and 1 on subnets of their own (10.99.0.1, 10.99.1.2),
#                         routed through the namespace netns_exec sw ... runs in: all
#                         traffic between them passes there (test_encrypt.sh's man in
#                         the middle)
#   netns_exec H CMD...   runs CMD on host H
#   netns_hostlist K L    the -H list of collie run for hosts 0..K-1, L slots each
#   netns_link H up|down  cuts or restores host H's link
#   netns_rsh FILE        writes an ssh stand-in: FILE HOST COMMAND runs COMMAND on the
#                         emulated host whose address is HOST (for collie run --rsh)
#   netns_down            kills what runs on the hosts, deletes them (also on EXIT)
# Needs root and iproute2 (ip, tc).  tc's netem (delay, loss) is not in this
# machine's kernel, so links are shaped by rate only.
netns_prefix="collie$$"
netns_count=0

netns_skip() {
    echo "SKIPPED: $*" >&2
    exit 77
}

netns_down() {
    local h ns
    for h in $(seq 0 $((netns_count - 1))) sw; do
        ns="$netns_prefix-$h"
        ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
        ip netns del "$ns" 2>/dev/null
        rm -rf "/tmp/$ns" # netns_rsh's session directories
    done
    netns_count=0
}

# The namespace between the hosts (a bridge's or a router's), after the checks.
netns_switch() {
    [ "$(id -u)" = 0 ] || netns_skip "emulated hosts need root (ip netns)"
    command -v ip >/dev/null || netns_skip "emulated hosts need iproute2 (apt-get install iproute2)"
    trap netns_down EXIT
    ip netns add "$netns_prefix-sw" 2>/dev/null || netns_skip "this machine cannot create network namespaces"
    ip -n "$netns_prefix-sw" link set lo up
}

# Host H: its namespace, with eth0 at ADDR/PREFIX; the other end of its link, c$$sH, in sw's.
netns_host() {
    local h=$1 ns="$netns_prefix-$1" sw="$netns_prefix-sw"
    ip netns add "$ns" || { netns_down; netns_skip "cannot create namespace $ns"; }
    ip link add "c$$h$h" type veth peer name "c$$s$h" || { netns_down; netns_skip "cannot create veth pairs"; }
    ip link set "c$$h$h" netns "$ns"
    ip link set "c$$s$h" netns "$sw"
    ip -n "$ns" link set "c$$h$h" name eth0
    ip -n "$ns" addr add "$2" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
}

netns_up() {
    local k=$1 rate=${2:-} h ns sw="$netns_prefix-sw"
    netns_switch
    ip -n "$sw" link add br0 type bridge && ip -n "$sw" link set br0 up ||
        { netns_down; netns_skip "cannot create a bridge"; }
    netns_count=$k
    for h in $(seq 0 $((k - 1))); do
        ns="$netns_prefix-$h"
        netns_host "$h" "10.99.0.$((h + 1))/24"
        ip -n "$sw" link set "c$$s$h" master br0
        ip -n "$sw" link set "c$$s$h" up
        if [ -n "$rate" ]; then
            # tbf: the host's egress at RATE, with a burst of a few packets' time and a
            # queue that bounds latency (no netem here: rate only)
            tc -n "$ns" qdisc add dev eth0 root tbf rate "$rate" burst "${netns_burst:-256kb}" \
                latency 50ms ||
                { netns_down; netns_skip "tc tbf is not available"; }
        fi
    done
}

netns_up_routed() {
    local h sw="$netns_prefix-sw"
    netns_switch
    ip netns exec "$sw" sysctl -qw net.ipv4.ip_forward=1 || { netns_down; netns_skip "cannot route"; }
    netns_count=2
    for h in 0 1; do
        netns_host "$h" "10.99.$h.$((h + 1))/24"
        ip -n "$netns_prefix-$h" route add default via "10.99.$h.254"
        ip -n "$sw" link set "c$$s$h" name "side$h"
        ip -n "$sw" addr add "10.99.$h.254/24" dev "side$h"
        ip -n "$sw" link set "side$h" up
    done
}

netns_exec() {
    local h=$1; shift
    ip netns exec "$netns_prefix-$h" "$@"
}

netns_link() {
    ip -n "$netns_prefix-$1" link set eth0 "$2"
}

netns_addr() { echo "10.99.0.$(($1 + 1))"; }

# netns_hostlist K SLOTS: "addr0:SLOTS,...,addrK-1:SLOTS", for collie run -H
netns_hostlist() {
    local h list=
    for h in $(seq 0 $(($1 - 1))); do list+="${list:+,}$(netns_addr "$h"):$2"; done
    echo "$list"
}

netns_rsh() {
    cat > "$1" <<EOS
#!/bin/sh
host=\$1; shift
ns="$netns_prefix-\$((\${host##*.} - 1))"
# The hosts share one kernel's hostname, /tmp and /dev/shm, where Open MPI's ranks name their
# session's and shared memory's files by hostname, job and local rank: each host its own.
mkdir -p "/tmp/\$ns" && export OMPI_MCA_orte_tmpdir_base="/tmp/\$ns" PRTE_MCA_prte_tmpdir_base="/tmp/\$ns" \\
    OMPI_MCA_btl_vader_backing_directory="/tmp/\$ns" OMPI_MCA_btl_sm_backing_directory="/tmp/\$ns"
exec ip netns exec "\$ns" sh -c "\$*"
EOS
    chmod +x "$1"
}
