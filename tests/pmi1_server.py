# SPDX-License-Identifier: BSD-3-Clause
"""A PMI-1 server that misbehaves, for the rendezvous's bad-input tests.

    python3 pmi1_server.py MODE CMD...

runs CMD as rank 1 of 2 (PMI_FD, PMI_RANK, PMI_SIZE, as MPICH's mpiexec sets
them) and answers its PMI-1 commands as MODE says: `silent` never answers
init; `nokey` has no key in its store; `garbage` holds a value that is not a
collie rendezvous; `late` runs CMD as rank 0 and answers init 3 s late, the
rest at once.  Exits with CMD's status.
"""
import os
import socket
import subprocess
import sys
import time

mode, cmd = sys.argv[1], sys.argv[2:]
ours, theirs = socket.socketpair()
env = dict(os.environ, PMI_FD=str(theirs.fileno()), PMI_RANK="0" if mode == "late" else "1",
           PMI_SIZE="2",
           MPI_LOCALRANKID="1", MPI_LOCALNRANKS="2")
proc = subprocess.Popen(cmd, env=env, pass_fds=[theirs.fileno()])
theirs.close()
answers = {
    "init": "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0",
    "get_my_kvsname": "cmd=my_kvsname kvsname=kvs_test_0",
    "barrier_in": "cmd=barrier_out",
    "finalize": "cmd=finalize_ack",
    "get": {"nokey": "cmd=get_result rc=-1 msg=key_not_found",
            "garbage": "cmd=get_result rc=0 value=hello"}.get(mode),
}
buf = b""
while True:
    data = ours.recv(4096)
    if not data:
        break
    buf += data
    while b"\n" in buf:
        line, buf = buf.split(b"\n", 1)
        command = line.decode().split()[0].split("=", 1)[1]
        if mode == "silent":
            continue
        if mode == "late" and command == "init":
            time.sleep(3)
        if command == "put":
            ours.sendall(b"cmd=put_result rc=0\n")
            continue
        ours.sendall((answers[command] + "\n").encode())
sys.exit(proc.wait())
