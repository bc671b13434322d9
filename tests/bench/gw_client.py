#!/usr/bin/env python3
"""gw_client.py - the gateway bench's own client (tests/bench/gateway.sh),
for the two figures h2load does not give.  HTTPS to NAME:443 (the name
resolved by the netns's resolver, as any client would), verified against
CA, HTTP/1.1, the Authorization header HDR on every request.

  gw_client.py ttfb NAME CA HDR N
      N requests on one kept-alive connection, each GET /sse?n=3&gap=20
      (tests/integ/gw_stream.py: three server-sent events 20 ms apart, each
      stamped with its send time); per request, the time from the request's
      last byte written to the first event's line read ("ttfb"), and for
      the later events their delay from being sent to being read ("ev").
      Prints "ttfb_p50_ms ttfb_p99_ms ev_p50_ms ev_p99_ms".
  gw_client.py hold NAME CA HDR N
      N connections, one GET / on each (response read whole), all kept
      open; prints "ready N" once all are, then waits for stdin's EOF.

Exits non-zero with a message when a connection or a request fails: the
bench must not print a figure a failing path did not earn.  Asserts nothing
about time.
"""
import json
import socket
import ssl
import sys
import time


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))] * 1000


def connect(name, ctx):
    raw = socket.create_connection((name, 443), timeout=10)
    return ctx.wrap_socket(raw, server_hostname=name)


def read_head(f):
    status = f.readline()
    if not status.startswith(b"HTTP/1.1 200"):
        sys.exit("gw_client: unexpected status %r" % status[:80])
    clen = None
    chunked = False
    while True:
        line = f.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        k, _, v = line.decode("latin-1").partition(":")
        if k.strip().lower() == "content-length":
            clen = int(v)
        elif k.strip().lower() == "transfer-encoding" and "chunked" in v.lower():
            chunked = True
    return clen, chunked


def read_chunk(f):
    size = int(f.readline().split(b";")[0], 16)
    data = f.read(size) if size else b""
    f.readline()
    return data


def ttfb(name, ctx, hdr, n):
    s = connect(name, ctx)
    f = s.makefile("rb")
    req = ("GET /sse?n=3&gap=20 HTTP/1.1\r\nHost: %s\r\n%s\r\n\r\n" % (name, hdr)).encode()
    first, later = [], []
    for _ in range(n):
        s.sendall(req)
        t0 = time.time()
        _, chunked = read_head(f)
        if not chunked:
            sys.exit("gw_client: the SSE answer is not chunked")
        k = 0
        while True:
            data = read_chunk(f)
            if not data:
                break
            now = time.time()
            for line in data.split(b"\n"):
                if line.startswith(b"data: "):
                    ev = json.loads(line[6:])
                    (first.append(now - t0) if k == 0 else later.append(now - ev["sent"]))
                    k += 1
        if k != 3:
            sys.exit("gw_client: %d events, not 3" % k)
    print("%.3f %.3f %.3f %.3f" % (pct(first, 0.5), pct(first, 0.99), pct(later, 0.5), pct(later, 0.99)))


def hold(name, ctx, hdr, n):
    conns = []
    req = ("GET / HTTP/1.1\r\nHost: %s\r\n%s\r\n\r\n" % (name, hdr)).encode()
    for _ in range(n):
        s = connect(name, ctx)
        s.sendall(req)
        f = s.makefile("rb")
        clen, _ = read_head(f)
        f.read(clen or 0)
        conns.append((s, f))
    print("ready %d" % len(conns), flush=True)
    sys.stdin.read()


def main():
    mode, name, ca, hdr, n = sys.argv[1:6]
    ctx = ssl.create_default_context(cafile=ca)
    ctx.set_alpn_protocols(["http/1.1"])
    {"ttfb": ttfb, "hold": hold}[mode](name, ctx, hdr, int(n))


if __name__ == "__main__":
    main()
