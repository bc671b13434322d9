#!/usr/bin/env python3
"""A hostile HTTPS upstream for the gateway's tests (gw_attack.sh), in the world's inet netns.

Usage: gw_hostile.py ADDR CERT KEY MODEFILE READY

Listens on ADDR:443 (TLS, ALPN h2 and http/1.1).  What it does is read from
MODEFILE at every connection, one line "MODE [SECS]":

  pingflood SECS  (h2) the server preface, then PING frames for SECS seconds,
                  never reading a byte: each PING asks for an acknowledgement
                  the gateway must queue back to it
  drip            (HTTP/1.1) read a request head, answer 200 chunked, then a
                  chunk every 100 ms until the client's side is gone (30 s
                  at most)

READY is created once it listens.
"""
import socket
import ssl
import struct
import sys
import threading
import time

ADDR, CERT, KEY, MODEFILE, READY = sys.argv[1:6]


def mode():
    try:
        words = open(MODEFILE).read().split()
    except OSError:
        words = []
    return (words[0] if words else "drip"), (float(words[1]) if len(words) > 1 else 5.0)


def frame(ftype, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", sid) + payload


def pingflood(s, secs):
    end = time.time() + secs
    s.settimeout(0.5)
    burst = frame(6, 0, 0, b"12345678") * 1024	# PING, no ACK flag: each wants one back
    try:
        s.sendall(frame(4, 0, 0))	# SETTINGS: the server preface (RFC 9113 3.4)
        while time.time() < end:
            try:
                s.sendall(burst)
            except socket.timeout:
                pass	# the gateway stopped reading: hold on
    except OSError:
        pass


def drip(s):
    s.settimeout(5)
    head = b""
    while b"\r\n\r\n" not in head:
        got = s.recv(4096)
        if not got:
            return
        head += got
    end = time.time() + 30
    try:
        s.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n")
        while time.time() < end:
            s.sendall(b"5\r\nhello\r\n")
            time.sleep(0.1)
    except OSError:
        pass


def handle(raw, ctx):
    try:
        s = ctx.wrap_socket(raw, server_side=True)
    except (OSError, ssl.SSLError):
        raw.close()
        return
    m, secs = mode()
    try:
        if m == "pingflood" and s.selected_alpn_protocol() == "h2":
            pingflood(s, secs)
        elif m == "drip":
            drip(s)
    finally:
        try:
            s.close()
        except OSError:
            pass


def main():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(CERT, KEY)
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((ADDR, 443))
    ls.listen(64)
    open(READY, "w").close()
    while True:
        raw, _ = ls.accept()
        threading.Thread(target=handle, args=(raw, ctx), daemon=True).start()


main()
