#!/usr/bin/env python3
"""sni_serial.py ADDR PORT LOG - a server that does its handshake in its
accept loop, one connection at a time, for tests/integ/sni_halfopen.sh
(issue 32): it accepts, then blocks reading the client's first bytes (no
timeout, as a simple TLS server blocks in its handshake), so while one
connection is half-open every later client waits.  One line per
connection to LOG, when that connection ends:
    <peer-port> data <repr of the first bytes>   (then "served\\n" is sent
                                                  and the connection closed)
    <peer-port> reset                            (ECONNRESET: the peer reset it)
    <peer-port> eof                              (closed without a byte)
    <peer-port> error <what>
Serves until killed by the test, by PID."""
import errno
import socket
import sys

addr, port, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]


def record(line):
    with open(log, "a") as f:
        f.write(line + "\n")


# create_server() sets SO_REUSEADDR itself.
s = socket.create_server((addr, port), family=socket.AF_INET6 if ":" in addr else socket.AF_INET,
                         backlog=16)
open(log, "a").close()
while True:
    c, peer = s.accept()
    try:
        d = c.recv(65536)	# blocks: the handshake's first flight
        if d:
            record("%d data %r" % (peer[1], d))
            c.sendall(b"served\n")
        else:
            record("%d eof" % peer[1])
    except OSError as e:
        record("%d %s" % (peer[1], "reset" if e.errno == errno.ECONNRESET else "error %s" % e))
    c.close()
