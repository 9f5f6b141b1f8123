#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the seed corpus of every harness into fuzz/corpus/NAME/ (committed).

Each seed is a well-formed input that reaches deep into its parser - a full
rendezvous, a header that passes, a description that reads - from which
libFuzzer mutates.  Run it again after a protocol change."""
import gzip, os, struct

here = os.path.dirname(os.path.abspath(__file__))


def put(harness, name, data):
    d = os.path.join(here, "corpus", harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# auth: role byte (0 accept, 1 connect), then what the peer sends.
put("auth", "accept", b"\x00" + bytes(range(16)) + bytes(32))
put("auth", "connect", b"\x01" + bytes(range(48)))

# seal: mode byte (0 raw wire bytes, 1 plaintext to seal and read back, 2 the same with a
# byte of the wire flipped), then the bytes.
put("seal", "raw", b"\x00" + struct.pack("<I", 40) + bytes(16) + bytes(range(40)) + bytes(16))
put("seal", "roundtrip", b"\x01" + bytes(range(256)) * 3)
put("seal", "flip", b"\x02" + b"\x00\x09" + bytes(range(200)))

# bootstrap: role byte, then the peer's stream after the handshake.
HELLO, FRAME, HOST_ID, ENDPOINT = 0x434C4253, 0x434C4246, 96, 68
def frame(payload, status=0):
    return struct.pack("<IIQ", FRAME, status, len(payload)) + payload
def endpoint(port):
    return b"127.0.0.1".ljust(64, b"\0") + struct.pack("<i", port)
host = b"other-host".ljust(HOST_ID, b"\0")
mine = b"fuzz-host".ljust(HOST_ID, b"\0")
# This process is rank 0; the fuzzer joins as rank 1.
put("bootstrap", "rank0", b"\x00" + struct.pack("<IIii", HELLO, 2, 1, 2) + frame(b"\0") +
    frame(host) + frame(endpoint(4243)))
put("bootstrap", "rank0_same_host", b"\x00" + struct.pack("<IIii", HELLO, 2, 1, 2) + frame(b"\0") +
    frame(mine) + frame(endpoint(4243)))
# This process is rank 1; the fuzzer is the rendezvous.
put("bootstrap", "rank1", b"\x01" + frame(b"\0\0") + frame(host + mine) +
    frame(endpoint(4243) + endpoint(4242)))
put("bootstrap", "rank1_error", b"\x01" + frame(b"rank 0 says no\0", status=5))

# wire: descriptor (seq, coll, dtype, op, algo, root, pad, count), channel,
# stripe, pad, agreed length, then the header received.
MAGIC = 0x434C5733
def desc(seq, coll, dtype, op, algo, root, count):
    return struct.pack("<IBBBBiIQ", seq, coll, dtype, op, algo, root, 0, count)
def header(seq, coll, dtype, op, stripe, algo, root, count, length):
    return struct.pack("<IIBBBBB3xiIQQ", MAGIC, seq, coll, dtype, op, stripe, algo, root, 0,
                       count, length)
put("wire", "allreduce_ring", desc(7, 0, 0, 0, 3, -1, 1024) + b"\x00\x01" + bytes(6) +
    struct.pack("<Q", 4096) + header(7, 0, 0, 0, 1, 3, -1, 1024, 4096))
put("wire", "mismatch", desc(7, 0, 0, 0, 3, -1, 1024) + b"\x00\x00" + bytes(6) +
    struct.pack("<Q", 4096) + header(8, 1, 0, 0, 0, 4, 0, 1024, 4096))
put("wire", "user", desc(0, 8, 6, 0, 0, 3, 10) + b"\x01\x00" + bytes(6) +
    struct.pack("<Q", 40) + header(0, 7, 6, 0, 0, 0, -1, 10, 40))

# config: 0, a variable's number, its text; or 1, a machine description.
for i, text in enumerate([b"256K", b"300", b"2.5s", b"INFO", b"-1", b"1G", b"ring"]):
    put("config", "variable%d" % i, b"\x00" + bytes([i * 5 % 40]) + text)
put("config", "machine", b"\x01" + b"""# collie machine description
ranks = 64
hosts = 8
ranks_per_host = 8
cores = 8
slot_bytes = 262144
host_latency_us = 0.28
host_carry_us = 0.2
host_switch_us = 1.8
host_peer_us = 0.07
host_bandwidth_gbs = 14.5
host_cache_gbs = 60
host_resident_gbs = 28
host_alone_gain = 2
link_latency_us = 5   # 25 Gbit/s
link_bandwidth_gbs = 3.125
links = 1
shared_cores = 0
shared_tcp_gbs = 2
""")

# hosts: 0 and a -H list, or 1 and a hostfile.
put("hosts", "list", b"\x00node1:4,node2,localhost:2")
put("hosts", "file", b"\x01# hosts\nnode1 slots=4\nnode2:2  # two\n\nlocalhost\n")

# options: 0 (bench) or 1 (sim), then the arguments, NUL-separated.
def args(*a):
    return b"\0".join(x.encode() for x in a)
put("options", "bench", b"\x00" + args("allreduce", "-b", "8", "-e", "1M", "-f", "2", "--iters",
                                       "20", "--dtype", "float16", "--baseline", "mpi,gloo"))
put("options", "bench_mlbench", b"\x00" + args("all", "--sizes", "mlbench", "--rounds", "3"))
put("options", "sim", b"\x01" + args("allreduce", "-n", "1024", "--hosts", "128", "--link",
                                     "25gbit,5us", "--cores", "8"))
put("options", "sim_set", b"\x01" + args("--ranks", "8", "--set", "host_cache_gbs=30", "--host",
                                         "10GB/s,1us", "--ranks-per-host", "2"))

# dataset: 1, two bytes splitting images from labels, the IDX files; or 0,
# the expected dimension (0: any), LIBSVM text.
images = struct.pack(">IIII", 0x803, 2, 2, 2) + bytes([0, 64, 128, 255, 1, 2, 3, 4])
labels = struct.pack(">II", 0x801, 2) + bytes([3, 9])
put("dataset", "idx", b"\x01" + struct.pack(">H", len(images)) + images + labels)
gz = gzip.compress(images, mtime=0)
put("dataset", "idx_gzip", b"\x01" + struct.pack(">H", len(gz)) + gz + labels)
put("dataset", "libsvm", b"\x00\x00" + b"+1 1:0.5 3:1\n-1 2:0.25\n\n2 4:1e-3\n")

# mem_table: a peer's table of collie_mem segments (src/transport/shm_mem.c: seq, used,
# magic, then 255 entries of serial, base, length, inode, fd), then the range asked for.
ENTRIES = 255
def mem_table(entries, used=None):
    out = struct.pack("<IIQ", 2, len(entries) if used is None else used, 0x636F6C6C6D656D31)
    for serial, base, length in entries:
        out += struct.pack("<QQQQq", serial, base, length, 1000 + serial, 10 + serial)
    return out + bytes(40 * (ENTRIES - len(entries)))
two = [(1, 0x7F0000000000, 1 << 20), (2, 0x7F0000200000, 4096)]
put("mem_table", "inside", mem_table(two) + struct.pack("<QQ", 0x7F0000000040, 4096))
put("mem_table", "edge", mem_table(two) + struct.pack("<QQ", 0x7F0000200000, 4096))
put("mem_table", "outside", mem_table(two) + struct.pack("<QQ", 0x7F0000200001, 4096))
put("mem_table", "wrapping", mem_table([(1, 0xFFFFFFFFFFFFF000, 1 << 20)], used=300) +
    struct.pack("<QQ", 0xFFFFFFFFFFFFF800, 1 << 16))
