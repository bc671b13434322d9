#!/usr/bin/env python3
"""recorder.py LISTEN_ADDR PORT UPSTREAM_PORT OUTDIR: a TCP relay in front of a
real server (openssl s_server or a plain HTTP responder on UPSTREAM_PORT).
For each connection, whatever the client sends in its first second (or
until it has sent a whole TLS ClientHello, or an HTTP header section) is
written to OUTDIR/conn-N.bin; everything is relayed both ways so the
client completes its handshake with the real server.  Runs only inside
the private netns capture.sh makes."""
import os
import socket
import sys
import threading

addr, port, up, outdir = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]


def complete(b):
    if b[:1] == b'\x16':
        # records until the first handshake message is whole
        hs, pos = b'', 0
        while pos + 5 <= len(b):
            n = int.from_bytes(b[pos + 3:pos + 5], 'big')
            hs += b[pos + 5:pos + 5 + n]
            pos += 5 + n
            if len(hs) >= 4 and len(hs) >= 4 + int.from_bytes(hs[1:4], 'big'):
                return True
        return False
    return b'\r\n\r\n' in b and not b.startswith(b'PRI *') or len(b) >= 24 and b.startswith(b'PRI *')


def pipe(src, dst):
    try:
        while True:
            d = src.recv(65536)
            if not d:
                break
            dst.sendall(d)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(c, n):
    c.settimeout(1.0)
    got = b''
    try:
        while not complete(got):
            d = c.recv(65536)
            if not d:
                break
            got += d
    except socket.timeout:
        pass
    with open(os.path.join(outdir, 'conn-%d.bin' % n), 'wb') as f:
        f.write(got)
    c.settimeout(None)
    u = socket.create_connection((addr, up))
    u.sendall(got)
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
    pipe(c, u)


ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((addr, port))
ls.listen(16)
n = 0
while True:
    c, _ = ls.accept()
    n += 1
    threading.Thread(target=serve, args=(c, n), daemon=True).start()
