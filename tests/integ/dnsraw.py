#!/usr/bin/env python3
"""dnsraw.py - send one hand-made (usually malformed) DNS message and print
what came back: "rcode=N id=N qd=N tc=N" or "noreply".

    dnsraw.py SERVER PORT udp|tcp KIND
KINDs are listed in PACKETS below.  For tcp, "tcp-*" kinds play games with
the length framing instead.
"""
import socket
import struct
import sys
import time


def hdr(id_=0x1234, flags=0x0100, qd=1, an=0, ns=0, ar=0):
    return struct.pack("!HHHHHH", id_, flags, qd, an, ns, ar)


def name(*labels):
    return b"".join(bytes([len(l)]) + l for l in labels) + b"\0"


Q = name(b"pypi", b"org") + struct.pack("!HH", 1, 1)

PACKETS = {
    "good": hdr() + Q,
    "empty": b"",
    "short": b"\x12\x34\x01",
    "header-only": hdr(qd=0),
    "qdcount0": hdr(qd=0) + Q,
    "qdcount2": hdr(qd=2) + Q + Q,
    "opcode-status": hdr(flags=0x1100) + Q,
    "response": hdr(flags=0x8180) + Q,
    "truncated-name": hdr() + b"\x04pypi\x03or",
    "label-overrun": hdr() + b"\x3fabc",
    "compression-loop": hdr() + b"\xc0\x0c" + struct.pack("!HH", 1, 1),
    "pointer-forward": hdr() + b"\xc0\x20" + struct.pack("!HH", 1, 1) + b"\0" * 32,
    "long-name": hdr() + b"".join(b"\x3f" + b"a" * 63 for _ in range(5)) + b"\0" + struct.pack("!HH", 1, 1),
    "no-qtype": hdr() + name(b"pypi", b"org"),
    "trailing-junk": hdr() + Q + b"\xde\xad\xbe\xef",
    "bad-label-type": hdr() + b"\x80abc\0" + struct.pack("!HH", 1, 1),
    "dot-in-label": hdr() + name(b"pypi.org") + struct.pack("!HH", 1, 1),
    "nul-in-label": hdr() + name(b"pypi\0", b"org") + struct.pack("!HH", 1, 1),
    "class-chaos": hdr() + name(b"pypi", b"org") + struct.pack("!HH", 16, 3),
    "huge": hdr() + Q + b"\0" * 70000,
    "opt-bad": hdr(ar=1) + Q + b"\0\x00\x29\x10\x00\x00\x00\x00\x00\x00\xff",
}


def parse(resp):
    if len(resp) < 12:
        return "short-reply len=%d" % len(resp)
    id_, flags, qd, an, ns, ar = struct.unpack("!HHHHHH", resp[:12])
    return "rcode=%d id=%d qd=%d an=%d tc=%d" % (flags & 15, id_, qd, an, (flags >> 9) & 1)


def main():
    server, port, proto, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    fam = socket.AF_INET6 if ":" in server else socket.AF_INET
    if proto == "udp":
        pkt = PACKETS[kind]
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.settimeout(2)
        try:
            s.sendto(pkt[:65507], (server, port))
            print(parse(s.recv(65535)))
        except (socket.timeout, ConnectionRefusedError):
            print("noreply")
        except OSError as e:
            print("error " + str(e))
        return
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(3)
    s.connect((server, port))
    if kind == "tcp-bigframe":
        s.sendall(struct.pack("!H", 65535) + b"\0" * 100)   # promises more than it sends
    elif kind == "tcp-zeroframe":
        s.sendall(struct.pack("!H", 0))
    elif kind == "tcp-trickle":
        # slowloris: a frame that never completes, one byte every 2 s
        s.sendall(struct.pack("!H", 64))
        for _ in range(10):
            time.sleep(2)
            try:
                s.sendall(b"\0")
                s.settimeout(0.1)
                if s.recv(1) == b"":
                    print("closed")
                    return
            except socket.timeout:
                pass
            except OSError:
                print("closed")
                return
        print("open")
        return
    elif kind == "tcp-halfheader":
        s.sendall(b"\x00")
        s.shutdown(socket.SHUT_WR)
    elif kind == "tcp-pipelined":
        good = PACKETS["good"]
        s.sendall((struct.pack("!H", len(good)) + good) * 3)
        got = []
        buf = b""
        try:
            while len(got) < 3:
                chunk = s.recv(65535)
                if not chunk:
                    break
                buf += chunk
                while len(buf) >= 2 and len(buf) >= 2 + struct.unpack("!H", buf[:2])[0]:
                    n = struct.unpack("!H", buf[:2])[0]
                    got.append(parse(buf[2:2 + n]))
                    buf = buf[2 + n:]
        except socket.timeout:
            pass
        print("answers=%d %s" % (len(got), " ".join(sorted(set(got)))))
        return
    else:
        pkt = PACKETS[kind]
        s.sendall(struct.pack("!H", len(pkt) & 0xffff) + pkt[:65535])
    try:
        data = s.recv(65535)
        print(parse(data[2:]) if len(data) >= 2 else "closed")
    except socket.timeout:
        print("noreply")
    except ConnectionResetError:
        print("closed")


if __name__ == "__main__":
    main()
