#!/usr/bin/env python3
"""dnstunnel.py - the attacker's and the measurer's side of tests/integ/dns_tunnel.sh.

    dnstunnel.py authd ADDR DOMAIN LOG       authoritative server for DOMAIN on ADDR:53:
                                             logs every qname it is asked (one a line),
                                             answers A, TXT and NULL with data (the way
                                             in), anything else with NODATA
    dnstunnel.py raw SERVER DOMAIN OUT [--label-len N] [--labels K] [--count N]
                                             the raw encoder: a file's bytes, base32 in
                                             K labels of N characters below DOMAIN, one
                                             distinct name per query, qtypes A, TXT and
                                             NULL in turn, sent to SERVER:53 one at a time;
                                             OUT gets a JSON summary (sent, answered,
                                             refused, first_refused: query number, ede)
    dnstunnel.py decode LOG DOMAIN           payload bytes that reached authd (distinct
                                             names below DOMAIN, base32-decoded)
    dnstunnel.py qbytes LOG DOMAIN           distinct names below DOMAIN in an unbound
                                             log (log-queries) and their characters below
                                             DOMAIN: "NAMES CHARS"
    dnstunnel.py sink ADDR PORT OUT          count the bytes TCP clients send to ADDR:PORT;
                                             OUT holds the running total
    dnstunnel.py send ADDR PORT BYTES        send BYTES random bytes to ADDR:PORT (through
                                             the tunnel); prints how many the kernel took

Only the standard library; the test world's addresses only.
"""
import base64
import json
import os
import random
import socket
import struct
import sys

T_A, T_NULL, T_TXT, T_OPT = 1, 10, 16, 41


def qname_wire(name):
    out = b""
    for label in name.strip(".").split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def parse_question(msg):
    """(id, flags, qname, qtype, end of question) or None."""
    if len(msg) < 12:
        return None
    id_, flags, qd = struct.unpack("!HHH", msg[:6])
    if qd != 1:
        return None
    i, labels = 12, []
    while i < len(msg) and msg[i] != 0:
        n = msg[i]
        if n & 0xC0 or i + 1 + n > len(msg):
            return None
        labels.append(msg[i + 1:i + 1 + n].decode("latin-1"))
        i += 1 + n
    if i + 5 > len(msg):
        return None
    qtype = struct.unpack("!H", msg[i + 1:i + 3])[0]
    return id_, flags, ".".join(labels).lower(), qtype, i + 5


def authd(addr, domain, log):
    """Answer as the zone's authority; every qname goes to LOG."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, 53))
    domain = domain.lower().strip(".")
    rnd = random.Random(7)
    with open(log, "a", buffering=1) as f:
        while True:
            msg, peer = s.recvfrom(4096)
            q = parse_question(msg)
            if not q:
                continue
            id_, flags, name, qtype, end = q
            f.write("%s %d\n" % (name, qtype))
            inside = name == domain or name.endswith("." + domain)
            rcode = 0 if inside else 5
            rr = b""
            if inside and qtype == T_A:
                rr = struct.pack("!HHHIH", 0xC00C, T_A, 1, 0, 4) + bytes([198, 51, 100, 82])
            elif inside and qtype in (T_TXT, T_NULL):
                data = bytes(rnd.getrandbits(8) for _ in range(180))
                rdata = bytes([len(data)]) + data if qtype == T_TXT else data
                rr = struct.pack("!HHHIH", 0xC00C, qtype, 1, 0, len(rdata)) + rdata
            hdr = struct.pack("!HHHHHH", id_, 0x8400 | (flags & 0x0100) | rcode, 1, 1 if rr else 0, 0, 0)
            s.sendto(hdr + msg[12:end] + rr, peer)


def query(server, name, qtype, id_):
    # EDNS(0) with a 1232-byte buffer: room for the EDE netd adds.
    opt = b"\0" + struct.pack("!HHIH", T_OPT, 1232, 0, 0)
    return struct.pack("!HHHHHH", id_, 0x0100, 1, 0, 0, 1) + qname_wire(name) + \
        struct.pack("!HH", qtype, 1) + opt


def ede_of(resp):
    """The EXTRA-TEXT of an RFC 8914 option in @resp's OPT RR, or ''."""
    i = resp.find(b"\x00\x0f", 12)
    while i != -1:
        if i + 6 <= len(resp):
            olen = struct.unpack("!H", resp[i + 2:i + 4])[0]
            if 2 <= olen <= len(resp) - i - 4:
                code = struct.unpack("!H", resp[i + 4:i + 6])[0]
                return "%d %s" % (code, resp[i + 6:i + 4 + olen].decode("ascii", "replace"))
        i = resp.find(b"\x00\x0f", i + 1)
    return ""


def raw(server, domain, out, label_len=57, labels=3, count=2000):
    rnd = random.Random(25)
    per_query = label_len * labels * 5 // 8
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    st = {"sent": 0, "answered": 0, "refused": 0, "lost": 0, "first_refused": 0,
          "ede": "", "bytes_per_query": per_query}
    qtypes = [T_A, T_TXT, T_NULL]
    streak = 0
    for i in range(count):
        chunk = bytes(rnd.getrandbits(8) for _ in range(per_query))
        text = base64.b32encode(chunk).decode().lower().rstrip("=")
        parts = [text[k:k + label_len] for k in range(0, len(text), label_len)][:labels]
        name = ".".join(parts) + "." + domain
        resp = None
        for _ in range(2):
            s.sendto(query(server, name, qtypes[i % 3], i & 0xFFFF), (server, 53))
            try:
                resp = s.recv(4096)
                break
            except socket.timeout:
                continue
        st["sent"] += 1
        if resp is None:
            st["lost"] += 1
            continue
        rcode = struct.unpack("!H", resp[2:4])[0] & 15
        if rcode == 5:
            st["refused"] += 1
            streak += 1
            if not st["first_refused"]:
                st["first_refused"] = i + 1
                st["ede"] = ede_of(resp)
            if streak >= 50:
                break
        else:
            st["answered"] += 1
            streak = 0
    with open(out, "w") as f:
        json.dump(st, f)


def below(name, domain):
    return name.endswith("." + domain) and name != domain


def decode(log, domain):
    seen, total = set(), 0
    domain = domain.lower().strip(".")
    for line in open(log):
        name = line.split()[0]
        if not below(name, domain) or name in seen:
            continue
        seen.add(name)
        text = name[:-len(domain) - 1].replace(".", "").upper()
        try:
            total += len(base64.b32decode(text + "=" * (-len(text) % 8)))
        except ValueError:
            pass
    print(total)


def qbytes(log, domain):
    seen = set()
    domain = domain.lower().strip(".")
    for line in open(log, errors="replace"):
        for word in line.split():
            w = word.lower().rstrip(".")
            if below(w, domain):
                seen.add(w)
    print(len(seen), sum(len(n) - len(domain) - 1 for n in seen))


def sink(addr, port, out):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((addr, port))
    srv.listen(4)
    total = 0
    with open(out, "w") as f:
        f.write("0\n")
    while True:
        c, _ = srv.accept()
        while True:
            b = c.recv(65536)
            if not b:
                break
            total += len(b)
            with open(out + ".tmp", "w") as f:
                f.write("%d\n" % total)
            os.replace(out + ".tmp", out)
        c.close()


def send(addr, port, nbytes):
    s = socket.create_connection((addr, port), timeout=20)
    s.settimeout(20)
    sent = 0
    rnd = random.Random(3)
    try:
        while sent < nbytes:
            n = s.send(bytes(rnd.getrandbits(8) for _ in range(min(4096, nbytes - sent))))
            sent += n
    except OSError:
        pass
    print(sent)


def main():
    a = sys.argv[1:]
    if a and a[0] == "authd":
        authd(a[1], a[2], a[3])
    elif a and a[0] == "raw":
        opts = {"--label-len": 57, "--labels": 3, "--count": 2000}
        rest = a[4:]
        for k in range(0, len(rest) - 1, 2):
            opts[rest[k]] = int(rest[k + 1])
        raw(a[1], a[2], a[3], opts["--label-len"], opts["--labels"], opts["--count"])
    elif a and a[0] == "decode":
        decode(a[1], a[2])
    elif a and a[0] == "qbytes":
        qbytes(a[1], a[2])
    elif a and a[0] == "sink":
        sink(a[1], int(a[2]), a[3])
    elif a and a[0] == "send":
        send(a[1], int(a[2]), int(a[3]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
