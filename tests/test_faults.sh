#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A fault campaign (tests/fault_campaign.py) as a test: TRIALS trials of
# random collectives with one fault each, on one host (4 ranks) or on three
# emulated hosts with ranks 2,1,1 (needs root; skipped otherwise).  Fails
# when a rank hangs, a result is wrong, an error comes late or is unnamed, or
# a process or /dev/shm entry is left behind.
#   test_faults.sh WORKER host|hosts TRIALS [SEED]
worker=$1 where=$2 trials=$3 seed=${4:-1}
here=$(dirname "$0")
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if [ "$where" = host ]; then
    exec "$py" "$here/fault_campaign.py" --worker "$worker" --hosts 4 --trials "$trials" --seed "$seed"
fi
. "$here/netns.sh"
netns_up 3
"$py" "$here/fault_campaign.py" --worker "$worker" --hosts 2,1,1 --netns "$netns_prefix" \
    --trials "$trials" --seed "$seed"
