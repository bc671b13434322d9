#!/usr/bin/env python3
"""dns_badupstream.py - an upstream resolver that misbehaves, for
tests/integ/dns_deadline.sh (inside a test world's netns only).

    dns_badupstream.py ADDR [SLOW_S]

Listens on ADDR port 53, UDP and TCP, and by the first label of the qname:
  slow.*   answers (A 198.51.100.40, TTL 60) after SLOW_S seconds (3.5)
  tc.*     answers over UDP with TC=1 and nothing else, so the resolver
           retries over TCP; there it gets one byte of the length prefix,
           then nothing (a partial answer), and the connection is held
  else     never answers (a blackhole: the datagram is read and dropped)
Prints READY once both sockets are bound; counts what it saw on stdout.
"""
import socket
import struct
import sys
import threading
import time

ADDR = sys.argv[1]
SLOW_S = float(sys.argv[2]) if len(sys.argv) > 2 else 3.5
held = []


def first_label(msg):
    if len(msg) < 13:
        return b""
    n = msg[12]
    return msg[13:13 + n].lower()


def question_end(msg):
    i = 12
    while i < len(msg) and msg[i] != 0:
        i += 1 + msg[i]
    return i + 5


def answer(msg, tc=False):
    qend = question_end(msg)
    flags = 0x8000 | (msg[2] & 0x01) << 8 | 0x0080  # QR, RD copied, RA
    if tc:
        return msg[:2] + struct.pack("!HHHHH", flags | 0x0200, 1, 0, 0, 0) + msg[12:qend]
    rr = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 60, 4) + socket.inet_aton("198.51.100.40")
    return msg[:2] + struct.pack("!HHHHH", flags, 1, 1, 0, 0) + msg[12:qend] + rr


def later(sock, msg, peer):
    time.sleep(SLOW_S)
    sock.sendto(answer(msg), peer)
    print("slow answered", flush=True)


def udp_loop(sock):
    while True:
        msg, peer = sock.recvfrom(4096)
        label = first_label(msg)
        print("udp", label.decode(errors="replace"), flush=True)
        if label == b"slow":
            threading.Thread(target=later, args=(sock, msg, peer), daemon=True).start()
        elif label == b"tc":
            sock.sendto(answer(msg, tc=True), peer)
        # anything else: dropped


def tcp_conn(conn):
    try:
        conn.recv(4096)
        print("tcp query", flush=True)
        conn.sendall(b"\x00")  # half a length prefix, then silence
        held.append(conn)
    except OSError:
        conn.close()


def tcp_loop(sock):
    while True:
        conn, _ = sock.accept()
        threading.Thread(target=tcp_conn, args=(conn,), daemon=True).start()


u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind((ADDR, 53))
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind((ADDR, 53))
t.listen(16)
threading.Thread(target=tcp_loop, args=(t,), daemon=True).start()
print("READY", flush=True)
udp_loop(u)
