#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""mitm.py - a man in the middle for the encrypted-link test (test_encrypt.sh).

Runs in a namespace that routes between two emulated hosts, where nftables
redirects every TCP connection from one host to the other to PORT here.  For
each connection it learns the real destination (SO_ORIGINAL_DST), connects
there itself and relays both ways.  In the direction connector -> acceptor
it does what MODE says, once per connection, at stream offset AT:
  pass      nothing: relays every byte as it came
  flip      flips one bit of the byte at AT
  replay    sends the 4096 bytes before AT again, at AT
  drop      leaves out the 4096 bytes from AT
Prints "mitm: N connections, M altered" when it gets SIGTERM.

    mitm.py PORT MODE AT
"""
import signal
import socket
import struct
import sys
import threading

SO_ORIGINAL_DST = 80
CHUNK = 4096

port, mode, at = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
counts = {"connections": 0, "altered": 0}
lock = threading.Lock()


def alter(data, offset, before):
    """The bytes to forward for data, which starts at stream offset `offset`
    after the bytes `before` (the last CHUNK of them)."""
    end = offset + len(data)
    if mode == "pass" or not offset <= at < end:
        return data, False
    i = at - offset
    if mode == "flip":
        return data[:i] + bytes([data[i] ^ 0x10]) + data[i + 1:], True
    if mode == "replay":
        return data[:i] + (before + data[:i])[-CHUNK:] + data[i:], True
    if mode == "drop":
        return data[:i] + data[i + CHUNK:], True
    raise SystemExit("mitm.py: no mode " + mode)


def relay(src, dst, tamper):
    offset, before = 0, b""
    try:
        while True:
            data = src.recv(1 << 16)
            if not data:
                break
            if tamper:
                out, altered = alter(data, offset, before)
                before = (before + data)[-CHUNK:]
                if altered:
                    with lock:
                        counts["altered"] += 1
                offset += len(data)
                data = out
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(conn):
    raw = conn.getsockopt(socket.SOL_IP, SO_ORIGINAL_DST, 16)
    dport, dip = struct.unpack("!2xH4s8x", raw)
    try:
        up = socket.create_connection((socket.inet_ntoa(dip), dport), timeout=10)
    except OSError:
        conn.close()
        return
    up.settimeout(None)
    for s in (conn, up):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with lock:
        counts["connections"] += 1
    threading.Thread(target=relay, args=(conn, up, True), daemon=True).start()
    threading.Thread(target=relay, args=(up, conn, False), daemon=True).start()


def report(*_):
    print("mitm: %d connections, %d altered" % (counts["connections"], counts["altered"]), flush=True)
    sys.exit(0)


signal.signal(signal.SIGTERM, report)
listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("0.0.0.0", port))
listener.listen(128)
print("mitm: listening", flush=True)
while True:
    c, _ = listener.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
