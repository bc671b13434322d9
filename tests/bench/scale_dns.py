#!/usr/bin/env python3
"""scale_dns.py - DNS clients inside many sandboxes from one process, for the
scale section of `make bench` (tests/bench/scale.sh).  Test code.

One UDP socket per sandbox, made inside the sandbox's netns (setns(2) by
path, then back), connected to its gateway's port 53, the way the
sandbox's resolver asks netd's proxy.  Sockets keep their netns after the
process switches back, so all of them are served from one event loop.

  scale_dns.py burst LIST NAME PAR
      LIST: lines "NETNS_PATH GATEWAY".  One A query for NAME from every
      sandbox, PAR in flight at once (2 s timeout, 2 tries each).  Prints
      "answered N failed N ms N".
  scale_dns.py wait NETNS_PATH GATEWAY NAME TIMEOUT_S GO_FILE
      Once GO_FILE exists (polled every ms), ask every 10 ms until an answer with an A record arrives (ICMP
      errors while nothing listens are ignored).  Prints "ready", once the
      socket exists, then "at EPOCH_MS" (wall clock) of the answer; or
      exits 1 after TIMEOUT_S.
"""
import ctypes
import os
import random
import resource
import select
import socket
import struct
import sys
import time

CLONE_NEWNET = 0x40000000
libc = ctypes.CDLL(None, use_errno=True)


def setns(fd):
    if libc.setns(fd, CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns")


def sock_in(netns, gw, home):
    fd = os.open(netns, os.O_RDONLY)
    try:
        setns(fd)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setblocking(False)
        s.connect((gw, 53))
    finally:
        setns(home)
        os.close(fd)
    return s


def query(qid, name):
    # RFC 1035 4.1.1: ID, RD, one question.
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack(">HH", 1, 1)


def answered(buf, qid):
    if len(buf) < 12:
        return False
    rid, flags, _, an = struct.unpack(">HHHH", buf[:8])
    return rid == qid and flags & 0x8000 and flags & 0xF == 0 and an > 0


def burst(listf, name, par):
    # One socket per sandbox, all open at once: thousands of descriptors.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    todo = []
    with open(listf) as f:
        for line in f:
            ns, gw = line.split()
            todo.append(sock_in(ns, gw, home))
    ep = select.epoll()
    live = {}  # fd -> [sock, qid, deadline, tries]
    ok = bad = 0
    t0 = time.monotonic()
    i = 0
    while i < len(todo) or live:
        while i < len(todo) and len(live) < par:
            s = todo[i]
            i += 1
            qid = random.randrange(65536)
            s.send(query(qid, name))
            live[s.fileno()] = [s, qid, time.monotonic() + 2, 1]
            ep.register(s.fileno(), select.EPOLLIN)
        for fd, _ in ep.poll(0.05):
            e = live[fd]
            try:
                buf = e[0].recv(4096)
            except OSError:
                continue
            if answered(buf, e[1]):
                ok += 1
                ep.unregister(fd)
                e[0].close()
                del live[fd]
        now = time.monotonic()
        for fd, e in list(live.items()):
            if now < e[2]:
                continue
            if e[3] < 2:
                e[3] += 1
                e[2] = now + 2
                e[0].send(query(e[1], name))
                continue
            bad += 1
            ep.unregister(fd)
            e[0].close()
            del live[fd]
    print("answered %d failed %d ms %d" % (ok, bad, (time.monotonic() - t0) * 1000))


def wait(ns, gw, name, timeout_s, go):
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    s = sock_in(ns, gw, home)
    print("ready", flush=True)
    t0 = time.monotonic()
    while not os.path.exists(go):
        if time.monotonic() - t0 > timeout_s:
            return 1
        time.sleep(0.001)
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        qid = random.randrange(65536)
        try:
            s.send(query(qid, name))
        except OSError:
            pass
        end = time.monotonic() + 0.01
        while time.monotonic() < end:
            r, _, _ = select.select([s], [], [], max(0, end - time.monotonic()))
            if not r:
                break
            try:
                if answered(s.recv(4096), qid):
                    print("at %d" % (time.time() * 1000), flush=True)
                    return 0
            except OSError:
                break  # ICMP port unreachable: nothing listens yet
        time.sleep(max(0, end - time.monotonic()))
    return 1


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "burst":
        burst(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif len(sys.argv) == 7 and sys.argv[1] == "wait":
        sys.exit(wait(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), sys.argv[6]))
    else:
        sys.exit(__doc__)
