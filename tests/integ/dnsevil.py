#!/usr/bin/env python3
"""dnsevil.py - a hostile upstream for the DNS proxy's tests: a UDP and TCP
DNS server that answers names under ev.example with crafted, inconsistent
or malformed records no real server sends (tests/integ/dns_hostile.sh).
Only ever started inside the test world, on a documentation address.

    dnsevil.py ADDR PORT LOGFILE READYFILE

Every query it receives is appended to LOGFILE as "QNAME QTYPE" (decimal),
so a test can tell what the proxy forwarded.  READYFILE is created once
both sockets listen.
"""
import socket
import struct
import sys
import threading

ZONE = "ev.example"


def name(text):
    out = b""
    for label in text.strip(".").split("."):
        if label:
            out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def rr(owner, rtype, ttl, rdata, cls=1):
    """@owner: wire bytes (a name or a pointer)."""
    return owner + struct.pack("!HHIH", rtype, cls, ttl, len(rdata)) + rdata


A, CNAME, SOA, DNAME, RRSIG, HTTPS = 1, 5, 6, 39, 46, 65
QPTR = b"\xc0\x0c"      # pointer to the question's name


def ip4(a):
    return socket.inet_pton(socket.AF_INET, a)


def svc(prio, target, params):
    """SVCB/HTTPS RDATA; @params: list of (key, value bytes), sent in the
    order given (the point of some answers is a wrong order)."""
    out = struct.pack("!H", prio) + name(target)
    for key, val in params:
        out += struct.pack("!HH", key, len(val)) + val
    return out


def soa_rdata():
    return name("ns1." + ZONE) + name("hostmaster." + ZONE) + struct.pack("!IIIII", 1, 3600, 600, 86400, 60)


def answers(qname, qtype, qend):
    """-> (rcode, answer RRs as a list of bytes, header offset hints)."""
    if qname == "www.dn." + ZONE:
        # DNAME dn -> good, but the "synthesized" CNAME points elsewhere
        # (RFC 6672 2.2: it must be the DNAME substitution).
        return 0, [rr(name("dn." + ZONE), DNAME, 300, name("good." + ZONE)),
                   rr(QPTR, CNAME, 300, name("www.evil.example")),
                   rr(name("www.evil.example"), A, 300, ip4("198.51.100.66"))]
    if qname == "www.dok." + ZONE:
        # The consistent version of the same thing.
        return 0, [rr(name("dok." + ZONE), DNAME, 300, name("good." + ZONE)),
                   rr(QPTR, CNAME, 300, name("www.good." + ZONE)),
                   rr(name("www.good." + ZONE), A, 300, ip4("198.51.100.67"))]
    if qname == "twocname." + ZONE:
        # Two CNAMEs for one owner (RFC 2181 10.1: at most one).
        return 0, [rr(QPTR, CNAME, 300, name("a." + ZONE)),
                   rr(QPTR, CNAME, 300, name("b." + ZONE)),
                   rr(name("a." + ZONE), A, 300, ip4("198.51.100.73")),
                   rr(name("b." + ZONE), A, 300, ip4("198.51.100.74"))]
    if qname == "svc." + ZONE and qtype == HTTPS:
        # ipv6hint (6) before ipv4hint (4): keys out of order (RFC 9460 2.2).
        return 0, [rr(QPTR, HTTPS, 300, svc(1, ".", [
            (6, socket.inet_pton(socket.AF_INET6, "2001:db8:40::68")),
            (4, ip4("198.51.100.68"))]))]
    if qname == "svcdup." + ZONE and qtype == HTTPS:
        # The same key twice (not strictly increasing).
        return 0, [rr(QPTR, HTTPS, 300, svc(1, ".", [(4, ip4("198.51.100.75")),
                                                    (4, ip4("198.51.100.76"))]))]
    if qname == "svcok." + ZONE and qtype == HTTPS:
        return 0, [rr(QPTR, HTTPS, 300, svc(1, ".", [(1, b"\x02h2"), (4, ip4("198.51.100.69"))]))]
    if qname == "svcalias." + ZONE and qtype == HTTPS:
        # AliasMode: SvcParams are to be ignored (RFC 9460 2.4.2).
        return 0, [rr(QPTR, HTTPS, 300, svc(0, "svcok." + ZONE, [(4, ip4("198.51.100.70"))]))]
    if qname == "ttlptr." + ZONE:
        # An A RR on the qname, a TXT RR whose TTL bytes read as the name
        # "x.ttlptr.ev.example" (label 'x', pointer to the question), and an
        # A RR owned by a pointer into that TTL: capping the TTL to
        # max_ttl would rewrite the third record's owner.
        first = rr(QPTR, A, 60, ip4("198.51.100.71"))
        txt_at = qend + len(first)
        second = rr(QPTR, 16, 0x0178C00C, b"\x01t")
        ttl_at = txt_at + 2 + 4
        third = rr(struct.pack("!H", 0xC000 | ttl_at), A, 60, ip4("198.51.100.72"))
        return 0, [first, second, third]
    if qname == ZONE and qtype == SOA:
        return 0, [rr(QPTR, SOA, 300, soa_rdata())]
    if qname.endswith("." + ZONE) or qname == ZONE:
        return 0, []
    return 5, []


def handle(msg):
    if len(msg) < 12:
        return None
    qid, flags, qd, an, ns, ar = struct.unpack("!HHHHHH", msg[:12])
    if qd != 1:
        return None
    pos, labels = 12, []
    while pos < len(msg) and msg[pos] != 0:
        n = msg[pos]
        labels.append(msg[pos + 1:pos + 1 + n].decode("ascii", "replace").lower())
        pos += 1 + n
    pos += 1
    qtype, qclass = struct.unpack("!HH", msg[pos:pos + 4])
    qend = pos + 4
    qname = ".".join(labels)
    edns = None
    if ar >= 1 and len(msg) >= qend + 11 and msg[qend] == 0 and \
            struct.unpack("!H", msg[qend + 1:qend + 3])[0] == 41:
        edns = struct.unpack("!I", msg[qend + 5:qend + 9])[0]
    with LOCK:
        with open(LOG, "a") as f:
            f.write("%s %d\n" % (qname or ".", qtype))
    rcode, rrs = answers(qname, qtype, qend)
    do = edns is not None and edns & 0x8000
    if do and qname == ZONE and qtype == SOA:
        # "signed": an RRSIG over the SOA (not a valid signature; the
        # proxy does not validate, it must pass it on).
        sig = struct.pack("!HBBIIIH", SOA, 13, 2, 300, 0x7FFFFFFF, 0x60000000, 4242) + \
            name(ZONE) + b"\x55" * 64
        rrs.append(rr(QPTR, RRSIG, 300, sig))
    out = struct.pack("!HHHHHH", qid, 0x8000 | (flags & 0x0110) | 0x0400 | 0x0080 | rcode,
                      1, len(rrs), 0, 1 if edns is not None else 0)
    out += msg[12:qend] + b"".join(rrs)
    if edns is not None:
        out += b"\0" + struct.pack("!HHIH", 41, 1232, 0x8000 if do else 0, 0)
    return out


def serve_udp(s):
    while True:
        msg, peer = s.recvfrom(65535)
        resp = handle(msg)
        if resp:
            s.sendto(resp, peer)


def serve_tcp_conn(c):
    with c:
        buf = b""
        while True:
            data = c.recv(65535)
            if not data:
                return
            buf += data
            while len(buf) >= 2 and len(buf) >= 2 + struct.unpack("!H", buf[:2])[0]:
                n = struct.unpack("!H", buf[:2])[0]
                resp = handle(buf[2:2 + n])
                buf = buf[2 + n:]
                if resp:
                    c.sendall(struct.pack("!H", len(resp)) + resp)


def serve_tcp(s):
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve_tcp_conn, args=(c,), daemon=True).start()


LOCK = threading.Lock()
LOG = ""


def main():
    global LOG
    addr, port, LOG, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind((addr, port))
    t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    t.bind((addr, port))
    t.listen(16)
    threading.Thread(target=serve_tcp, args=(t,), daemon=True).start()
    open(ready, "w").close()
    serve_udp(u)


if __name__ == "__main__":
    main()
