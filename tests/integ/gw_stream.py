#!/usr/bin/env python3
"""The API gateway test's streaming upstream (tests/integ/gw_api.sh): HTTPS
on ADDR:443 with CERT/KEY, HTTP/1.1.

  GET /sse?n=N&gap=MS   text/event-stream, chunked: N events MS apart, each
                        `data: {"k": i, "sent": <unix time>}`, flushed as sent
  GET /ws               a WebSocket (RFC 6455) upgrade; echoes one text frame
  anything else         200 with the request's Host and path

Every request's Authorization header goes to --log (one line each), so the
test sees what the server received.  Usage: gw_stream.py ADDR CERT KEY LOG READY
"""
import base64
import hashlib
import http.server
import json
import socketserver
import ssl
import struct
import sys
import time
from urllib.parse import parse_qs, urlsplit

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY: each flushed event leaves at once, not held by Nagle until
    # the previous segment's (delayed, 40 ms) ACK - that would be the
    # server's latency, not the path's.
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        pass

    def _log(self):
        with open(self.server.logfile, "a") as f:
            f.write("%s %s auth=%s\n" % (self.command, self.path,
                                        self.headers.get("Authorization", "")))

    def do_GET(self):
        self._log()
        u = urlsplit(self.path)
        if u.path == "/sse":
            q = parse_qs(u.query)
            self._sse(int(q.get("n", ["5"])[0]), int(q.get("gap", ["200"])[0]))
        elif u.path == "/ws" and self.headers.get("Upgrade", "").lower() == "websocket":
            self._ws()
        else:
            body = json.dumps({"host": self.headers.get("Host"), "path": u.path}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def _sse(self, n, gap_ms):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.flush()
        for k in range(n):
            ev = ("data: %s\n\n" % json.dumps({"k": k, "sent": time.time()})).encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(ev), ev))
            self.wfile.flush()
            time.sleep(gap_ms / 1000.0)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _ws(self):
        key = self.headers.get("Sec-WebSocket-Key", "")
        acc = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", acc)
        self.end_headers()
        self.wfile.flush()
        hdr = self.rfile.read(2)
        ln = hdr[1] & 0x7F
        if ln == 126:
            ln = struct.unpack("!H", self.rfile.read(2))[0]
        mask = self.rfile.read(4)
        data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(ln)))
        reply = b"echo: " + data
        self.wfile.write(bytes([0x81, len(reply)]) + reply)
        self.wfile.flush()
        self.close_connection = True


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    addr, cert, key, log, ready = sys.argv[1:6]
    srv = Server((addr, 443), Handler)
    srv.logfile = log
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.set_alpn_protocols(["http/1.1"])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    open(ready, "w").close()
    srv.serve_forever()


if __name__ == "__main__":
    main()
