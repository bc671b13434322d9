#!/usr/bin/env python3
"""websrv - the test world's web servers, in one process (stdlib only).

Started by tests/world.sh inside the world's "inet" netns.  Reads a listener
table (one listener a line, '#' comments):

    ADDR PORT CERT|- KEY|- NAME[,NAME...]

and serves every listener from its own thread (ThreadingHTTPServer, one
thread per connection; TLS handshakes happen in the connection's thread).

Every listener answers:
    GET/HEAD /bytes/N   N octets (N <= 1 GiB), for byte-accounting tests;
                        ?rate=B paces them at B octets a second
    GET/HEAD anything   "NAME ok\n" - NAME is the Host header if it is one of
                        this listener's names, else the listener's first name
    POST/PUT anything   the number of body octets received, then "\n"
                        (Content-Length or chunked)

When every socket is bound it writes the file named by --ready.  It is not a
product: it trusts nothing it reads from a client beyond the limits below,
and it never serves files.
"""

import argparse
import ipaddress
import os
import re
import time
import signal
import socket
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

MAX_BYTES = 1 << 30          # largest /bytes/N
MAX_BODY = 1 << 30           # largest request body counted
CHUNK = 64 * 1024
CONN_TIMEOUT_S = 30
_BYTES_RE = re.compile(r"/bytes/([0-9]{1,10})")
_FILL = b"x" * CHUNK


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "world-websrv/1"

    def _reply(self, code, body, ctype="text/plain; charset=utf-8", send_body=True):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def _name(self):
        host = (self.headers.get("Host") or "").strip().lower()
        if host.startswith("["):
            host = host[1:].split("]", 1)[0]
        elif host.count(":") == 1:
            host = host.split(":", 1)[0]
        names = self.server.names
        return host if host in names else names[0]

    def _get(self, send_body):
        parts = urlsplit(self.path)
        path = parts.path
        # ?rate=B: send at most B octets a second, so a transfer is still on
        # the wire (not already in the client's socket buffer) when a test
        # cuts, restarts or reloads something in the middle of it.
        rate = 0
        for kv in parts.query.split("&"):
            if kv.startswith("rate=") and kv[5:].isdigit():
                rate = int(kv[5:])
        m = _BYTES_RE.fullmatch(path)
        if m is None:
            self._reply(200, f"{self._name()} ok\n".encode(), send_body=send_body)
            return
        n = int(m.group(1))
        if n > MAX_BYTES:
            self._reply(400, b"too many bytes\n", send_body=send_body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(n))
        self.end_headers()
        if not send_body:
            return
        left = n
        step = min(CHUNK, max(1024, rate // 10)) if rate else CHUNK
        t0 = time.monotonic()
        sent = 0
        while left > 0:
            k = min(left, step)
            self.wfile.write(_FILL[:k])
            left -= k
            sent += k
            if rate:
                ahead = sent / rate - (time.monotonic() - t0)
                if ahead > 0:
                    time.sleep(ahead)

    def do_GET(self):
        self._get(True)

    def do_HEAD(self):
        self._get(False)

    def _count_chunked(self):
        total = 0
        while True:
            line = self.rfile.readline(1024)
            size = int(line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass          # trailers
                return total
            total += size
            if total > MAX_BODY:
                raise ValueError("body too large")
            self._drain(size)
            self.rfile.readline(1024)     # CRLF after the chunk

    def _drain(self, n):
        while n > 0:
            got = self.rfile.read(min(n, CHUNK))
            if not got:
                raise ValueError("short body")
            n -= len(got)

    def do_POST(self):
        try:
            if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                total = self._count_chunked()
            else:
                total = int(self.headers.get("Content-Length") or "0")
                if total < 0 or total > MAX_BODY:
                    raise ValueError("bad Content-Length")
                self._drain(total)
        except ValueError:
            self.close_connection = True
            self._reply(400, b"bad body\n")
            return
        self._reply(200, f"{total}\n".encode())

    do_PUT = do_POST

    def log_message(self, fmt, *args):
        sys.stderr.write("%s:%d %s %s\n" % (self.server.server_address[0],
                                            self.server.server_address[1],
                                            self.client_address[0], fmt % args))


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, port, ctx, names):
        fam = socket.AF_INET6 if ipaddress.ip_address(addr).version == 6 else socket.AF_INET
        self.address_family = fam
        self.ctx = ctx
        self.names = names
        super().__init__((addr, port), Handler)

    def finish_request(self, request, client_address):
        request.settimeout(CONN_TIMEOUT_S)
        if self.ctx is None:
            super().finish_request(request, client_address)
            return
        # Handshake here, in the connection's own thread, so one slow or
        # broken client never stalls the accept loop.
        try:
            tls = self.ctx.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            sys.stderr.write(f"{self.server_address[0]}:{self.server_address[1]} "
                             f"{client_address[0]} TLS handshake failed: {e}\n")
            return
        try:
            super().finish_request(tls, client_address)
        finally:
            try:
                tls.close()
            except OSError:
                pass

    def handle_error(self, request, client_address):
        sys.stderr.write(f"{self.server_address[0]}:{self.server_address[1]} "
                         f"{client_address[0]} error: {sys.exc_info()[1]!r}\n")


def load(path):
    out = []
    with open(path) as f:
        for ln, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 5:
                sys.exit(f"{path}:{ln}: want ADDR PORT CERT KEY NAMES")
            addr, port, cert, key, names = parts
            ctx = None
            if cert != "-":
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                ctx.load_cert_chain(cert, key)
            out.append((addr, int(port), ctx, names.split(",")))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listeners", required=True)
    ap.add_argument("--ready", required=True)
    a = ap.parse_args()

    servers = [Server(*spec) for spec in load(a.listeners)]
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()

    # SIGTERM keeps its default action: the process ends at once, and
    # every socket with it.
    with open(a.ready + ".tmp", "w") as f:
        f.write(f"{os.getpid()}\n")
    os.rename(a.ready + ".tmp", a.ready)
    while True:
        signal.pause()

if __name__ == "__main__":
    main()
