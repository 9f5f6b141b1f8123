#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# COLLIE_TIMELINE: each rank writes a Chrome trace, `collie timeline` merges
# them, and the result parses as JSON and holds every operation: the fusion
# scenario's calls (68 one by one, then the same grouped: the small ones fused
# into carriers that name how many requests they carry), on both ranks, with
# their waits.
collie=$1 prog=$2
. "$(dirname "$0")/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
expect_status 0 env COLLIE_TIMELINE="$dir/trace" COLLIE_FUSION_BYTES=4M "$collie" run -n 2 "$prog" fusion
[ -s "$dir/trace.rank0.json" ] && [ -s "$dir/trace.rank1.json" ] || fail "no per-rank files: $(ls "$dir")"
expect_status 0 "$collie" timeline "$dir/trace"
expect_output "2 ranks' files"
/usr/bin/python3 - "$dir/trace" <<'PY' || fail "the merged trace is wrong"
import json, sys, collections
events = json.load(open(sys.argv[1]))          # must parse
ops = [e for e in events if e.get("ph") == "X" and "args" in e]
for rank in (0, 1):
    mine = [e for e in ops if e["pid"] == rank]
    count = collections.Counter(e["name"] for e in mine)
    fused = [e for e in mine if "fused_requests" in e["args"]]
    carried = sum(e["args"]["fused_requests"] for e in fused)
    # One by one: 67 allreduces + 1 broadcast; grouped: the same, 'carried' of them in carriers.
    want_allreduce = 67 + (67 - carried + len(fused)) + 2  # + the two of the nested groups
    assert count["broadcast"] == 2, count
    assert count["allreduce"] == want_allreduce, (count, carried, len(fused))
    # The latency-bound ones (ResNet-18's biases and norms, the small calls) ride in carriers.
    assert len(fused) >= 1 and carried >= 2 * len(fused) and carried >= 20, (len(fused), carried)
    assert all(e["dur"] >= 0 and e["args"]["bytes"] > 0 for e in mine if e["name"] != "barrier")
    assert all(e["args"]["algorithm"] for e in mine)
    waits = [e for e in events if e.get("name") == "wait" and e["pid"] == rank]
    queued = [e for e in events if e.get("name") == "queued" and e["pid"] == rank]
    assert queued and len(queued) % 2 == 0, len(queued)
    print(f"rank {rank}: {dict(count)}, {len(fused)} carriers of {carried} requests, {len(waits)} waits")
PY
echo "timeline: ok"
