#!/usr/bin/env python3
"""sni_client.py ADDR PORT MODE [NAME] - one connection for tests/integ/sni_check.sh.
Prints one line: "ok <first response line>" or "reset" or "error <what>".
MODE:
  tls NAME       TLS (python ssl), SNI NAME, the ClientHello written whole
  split NAME     the same, the ClientHello written in 40-byte TCP segments
                 (TCP_NODELAY, a pause between them)
  nosni          TLS with no server_name at all
  http NAME      plain HTTP/1.1 GET with Host: NAME
  garbage        bytes that are neither TLS nor HTTP
Certificates are not checked: what is tested is whether bytes get through."""
import socket
import ssl
import sys
import time

addr, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
name = sys.argv[4] if len(sys.argv) > 4 else None


def out(s):
    print(s)
    sys.exit(0)


def tls(sock, sni, piece):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    inc, outg = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, outg, server_hostname=sni)

    def flush():
        data = outg.read()
        while data:
            n = piece or len(data)
            sock.sendall(data[:n])
            data = data[n:]
            if piece and data:
                time.sleep(0.05)
    while True:
        try:
            obj.do_handshake()
            break
        except ssl.SSLWantReadError:
            flush()
            d = sock.recv(65536)
            if not d:
                raise ConnectionResetError("closed during the handshake")
            inc.write(d)
    flush()
    obj.write(b"GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (sni or addr).encode())
    flush()
    resp = b""
    while b"\r\n" not in resp:
        d = sock.recv(65536)
        if not d:
            break
        inc.write(d)
        try:
            resp += obj.read(65536)
        except ssl.SSLWantReadError:
            pass
    return resp


try:
    s = socket.create_connection((addr, port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if mode in ("tls", "split", "nosni"):
        resp = tls(s, name if mode != "nosni" else None, 40 if mode == "split" else 0)
    else:
        if mode == "http":
            s.sendall(b"GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % name.encode())
        else:
            s.sendall(b"\x00\x01\x02 not a protocol \xff\r\n\r\n")
        resp = b""
        while True:     # Connection: close - read to the end
            d = s.recv(65536)
            if not d:
                break
            resp += d
    if not resp:
        out("error closed without a response")
    out("ok " + resp.split(b"\r\n")[0].decode(errors="replace") + " " +
        resp.split(b"\r\n\r\n", 1)[-1].split(b"\n")[0].decode(errors="replace"))
except ConnectionResetError:
    out("reset")
except (ssl.SSLError, OSError) as e:
    if "reset" in str(e).lower():
        out("reset")
    out("error %s" % e)
