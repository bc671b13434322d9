#!/usr/bin/env python3
"""sni_recorder.py ADDR PORT LOG - a TCP server for tests/integ/sni_evasion.sh
(issue 30): it stands for a server behind a shared address, and writes what
it really received, one line per connection, to LOG:
    <peer-port> <repr of the bytes>
Each connection is read until the peer is quiet for 1 s (or 5 s in all),
then closed with a RST (SO_LINGER 0), which is what leaves conntrack's
entry of the connection behind for a reuse.  Bounded: it serves until
killed by the test, by PID; every connection gets its own thread."""
import socket
import struct
import sys
import threading
import time

addr, port, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lock = threading.Lock()


def serve(c, peer):
    data = b""
    end = time.monotonic() + 5
    c.settimeout(1)
    try:
        while time.monotonic() < end:
            d = c.recv(65536)
            if not d:
                break
            data += d
    except OSError:
        pass
    with lock, open(log, "a") as f:
        f.write("%d %r\n" % (peer[1], data))
    try:
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    c.close()


fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
s = socket.socket(fam, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((addr, port))
s.listen(1024)
open(log, "a").close()
while True:
    c, peer = s.accept()
    threading.Thread(target=serve, args=(c, peer), daemon=True).start()
