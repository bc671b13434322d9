#!/usr/bin/env python3
"""sni_lat.py ADDR PORT NAME N CA - N sequential HTTPS GETs with SNI NAME; for
each, the time from connect() (the SYN) to the first response byte.  Prints
"p50_ms p99_ms conn_per_s".  For tests/bench/sni.sh; asserts nothing."""
import socket
import ssl
import sys
import time

addr, port, name, n, ca = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
ctx = ssl.create_default_context(cafile=ca)
lat = []
t0 = time.monotonic()
for _ in range(n):
    s0 = time.monotonic()
    with socket.create_connection((addr, port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname=name) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % name.encode())
            if not s.recv(1):
                sys.exit("no response")
            lat.append(time.monotonic() - s0)
total = time.monotonic() - t0
lat.sort()
print("%.2f %.2f %.1f" % (lat[len(lat) // 2] * 1000, lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000,
                          n / total))
