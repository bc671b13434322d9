#!/usr/bin/env python3
"""icmp_error.py - an ICMP error that names another flow (tests/integ/fw_fastpath.sh).

  send SERVER CLIENT CLIENT_PORT SERVER_PORT TAG   from a sandbox: three ICMP
      "fragmentation needed" errors to SERVER, from this host's own address,
      whose inner header is a TCP segment SERVER:SERVER_PORT -> CLIENT:CLIENT_PORT
      followed by TAG: conntrack takes it as related to that connection
      (whoever's it is).
  sniff SECONDS TAG   on the server's side: print each ICMP packet that
      carries TAG, until SECONDS pass without one.
"""
import socket
import struct
import sys


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def send(server, client, cport, sport, tag):
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + len(tag), 1, 0, 64, 6, 0,
                     socket.inet_aton(server), socket.inet_aton(client))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    # A whole 20-byte TCP header before the tag: NAT rewrites its checksum
    # (bytes 16-17), which would garble a tag there.
    inner = ip + struct.pack("!HHI", sport, cport, 12345) + b"\0" * 12 + tag
    icmp = struct.pack("!BBHHH", 3, 4, 0, 0, 1000) + inner
    icmp = icmp[:2] + struct.pack("!H", csum(icmp)) + icmp[4:]
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    for _ in range(3):
        s.sendto(icmp, (server, 0))


def sniff(secs, tag):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.settimeout(secs)
    try:
        while True:
            d, a = s.recvfrom(65535)
            if tag in d:
                print("from", a[0], flush=True)
    except socket.timeout:
        pass


if __name__ == "__main__":
    if sys.argv[1] == "send":
        send(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6].encode())
    else:
        sniff(float(sys.argv[2]), sys.argv[3].encode())
