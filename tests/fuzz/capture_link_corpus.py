#!/usr/bin/env python3
"""Capture fuzz_link seeds: real rtnetlink dump replies and RTM_DELLINK
events from a private, anonymous network namespace (run through
tests/fuzz/capture_link_corpus.sh, which makes the namespace; nothing here
touches the host's network).  Writes tests/fuzz/corpus/fuzz_link/NAME."""
import os
import socket
import struct
import subprocess
import sys

NLM_F_REQUEST, NLM_F_DUMP = 1, 0x300
RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE = 18, 22, 26
NLMSG_DONE = 3
RTNLGRP_LINK = 1
out = sys.argv[1]


def ip(*args):
    subprocess.run(["ip", *args], check=True)


def dump(msg_type, family, extra):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    body = extra(family)
    s.send(struct.pack("=LHHLL", 16 + len(body), msg_type, NLM_F_REQUEST | NLM_F_DUMP, 1, 0) + body)
    data = b""
    while True:
        buf = s.recv(32768)
        data += buf
        # the last message of the last part is NLMSG_DONE
        off, done = 0, False
        while off + 16 <= len(buf):
            ln, ty = struct.unpack_from("=LH", buf, off)
            done |= ty == NLMSG_DONE
            off += (ln + 3) & ~3
        if done:
            break
    s.close()
    return data


def rtgen(f):
    return struct.pack("=B3x", f)


def ifinfo(f):
    return struct.pack("=BxHiII", f, 0, 0, 0, 0)


def ifaddr(f):
    return struct.pack("=BBBBI", f, 0, 0, 0, 0)


def rtmsg(f):
    return struct.pack("=BBBBBBBBI", f, 0, 0, 0, 0, 0, 0, 0, 0)


def save(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data[:32768])


ip("link", "set", "lo", "up")
ip("link", "add", "nd0a1b2c3", "type", "veth", "peer", "name", "eth0")
ip("link", "add", "dummy0", "type", "veth", "peer", "name", "uplink1")
for dev in ("nd0a1b2c3", "eth0", "dummy0", "uplink1"):
    ip("link", "set", dev, "up")
ip("addr", "add", "10.87.0.1/30", "dev", "nd0a1b2c3")
ip("addr", "add", "10.87.0.2/32", "peer", "10.87.0.1", "dev", "eth0")
ip("addr", "add", "fd00:87::1/64", "dev", "nd0a1b2c3", "nodad")
ip("addr", "add", "192.0.2.1/24", "dev", "dummy0")
ip("-6", "addr", "add", "2001:db8::1/64", "dev", "dummy0", "nodad")
ip("route", "add", "default", "via", "192.0.2.254", "dev", "dummy0", "metric", "100")
ip("route", "add", "default", "via", "10.87.0.2", "dev", "nd0a1b2c3", "metric", "200")
ip("route", "add", "default", "via", "192.0.2.253", "dev", "dummy0", "table", "100")
ip("-6", "route", "add", "default", "via", "2001:db8::fe", "dev", "dummy0")
ip("route", "add", "198.51.100.0/24", "nexthop", "via", "192.0.2.250", "dev", "dummy0",
   "nexthop", "via", "192.0.2.251", "dev", "dummy0")

save("links", dump(RTM_GETLINK, socket.AF_UNSPEC, rtgen))
save("link-one", dump(RTM_GETLINK, socket.AF_UNSPEC, ifinfo)[:600])
save("addrs", dump(RTM_GETADDR, socket.AF_UNSPEC, ifaddr))
save("routes4", dump(RTM_GETROUTE, socket.AF_INET, rtmsg))
save("routes6", dump(RTM_GETROUTE, socket.AF_INET6, rtmsg))
ip("route", "del", "default", "table", "main", "metric", "100")
ip("route", "del", "default", "table", "main", "metric", "200")
ip("route", "add", "default", "nexthop", "via", "192.0.2.254", "dev", "dummy0",
   "nexthop", "via", "10.87.0.2", "dev", "nd0a1b2c3")
save("routes4-ecmp", dump(RTM_GETROUTE, socket.AF_INET, rtmsg))

# linkwatch: the events of a veth pair being deleted
w = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
w.bind((0, 1 << (RTNLGRP_LINK - 1)))
ip("link", "del", "nd0a1b2c3")
w.settimeout(1)
events = b""
try:
    while True:
        events += w.recv(32768)
except socket.timeout:
    pass
save("dellink-veth", events)
