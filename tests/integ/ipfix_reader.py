#!/usr/bin/env python3
"""ipfix_reader.py - a small IPFIX collector for tests/integ/flow_ipfix.sh
(test code).  Listens on UDP or TCP, parses RFC 7011 Messages with the
Templates they carry (kept per Transport Session: a UDP peer, a TCP
connection), decodes netd's Data Records including its enterprise-specific
strings (RFC 7011 3.2, 7) and RFC 5103's reverse elements, and writes one
JSON line per message and per record to --out, flushed at once.

    ipfix_reader.py --udp ADDR PORT --out FILE [--pen 32473] [--ready FILE]
    ipfix_reader.py --tcp ADDR PORT --out FILE ...

Lines:
  {"kind":"session", "peer":...}                      a TCP connection / new UDP peer
  {"kind":"message", "seq":N, "domain":N, "templates":N, "records":N,
   "unknown_sets":N}                                     (data before its Template)
  {"kind":"record", "src":..., "dst":..., "sport":N, "dport":N, "proto":N,
   "start_ms":N, "end_ms":N, "octets_out":N, "packets_out":N, "octets_in":N,
   "packets_in":N, "end_reason":N, "sandbox":..., "policy":..., "domain":...,
   "rule":..., "verdict":...}
"""
import argparse
import ipaddress
import json
import socket
import struct
import sys

REVERSE_PEN = 29305
IANA = {
    152: "start_ms", 153: "end_ms", 8: "src", 12: "dst", 27: "src", 28: "dst",
    7: "sport", 11: "dport", 4: "proto", 136: "end_reason", 239: "biflow_direction",
    1: "octets_out", 2: "packets_out",
}
REVERSE = {1: "octets_in", 2: "packets_in"}
OURS = {1: "sandbox", 2: "policy", 3: "domain", 4: "rule", 5: "verdict"}


class Session:
    def __init__(self, out, pen, peer):
        self.out, self.pen, self.templates = out, pen, {}
        self.emit({"kind": "session", "peer": peer})

    def emit(self, obj):
        self.out.write(json.dumps(obj, separators=(",", ":")) + "\n")
        self.out.flush()

    def message(self, buf):
        version, length, export_s, seq, domain = struct.unpack_from("!HHIII", buf)
        if version != 10 or length != len(buf):
            raise ValueError(f"bad header: version {version} length {length}/{len(buf)}")
        off, n_tpl, recs, unknown = 16, 0, [], 0
        while off < length:
            set_id, set_len = struct.unpack_from("!HH", buf, off)
            if set_len < 4 or off + set_len > length:
                raise ValueError("bad set length")
            body = buf[off + 4:off + set_len]
            if set_id == 2:
                n_tpl += self.template_set(body)
            elif set_id >= 256:
                if set_id in self.templates:
                    recs += self.data_set(self.templates[set_id], body)
                else:
                    unknown += 1
            off += set_len
        self.emit({"kind": "message", "seq": seq, "domain": domain, "export_s": export_s,
                   "templates": n_tpl, "records": len(recs), "unknown_sets": unknown})
        for r in recs:
            self.emit(r)

    def template_set(self, body):
        off, n = 0, 0
        while len(body) - off >= 4:
            tid, count = struct.unpack_from("!HH", body, off)
            off += 4
            fields = []
            for _ in range(count):
                ie, flen = struct.unpack_from("!HH", body, off)
                off += 4
                pen = 0
                if ie & 0x8000:
                    (pen,) = struct.unpack_from("!I", body, off)
                    off += 4
                fields.append((ie & 0x7FFF, flen, pen))
            self.templates[tid] = fields
            n += 1
        return n

    def data_set(self, fields, body):
        off, recs = 0, []
        while off < len(body):
            rec = {"kind": "record"}
            for ie, flen, pen in fields:
                if flen == 65535:
                    flen = body[off]
                    off += 1
                    if flen == 255:
                        (flen,) = struct.unpack_from("!H", body, off)
                        off += 2
                val = body[off:off + flen]
                if len(val) != flen:
                    raise ValueError("record runs past its set")
                off += flen
                if pen == 0 and ie in IANA:
                    name = IANA[ie]
                    rec[name] = (str(ipaddress.ip_address(val)) if name in ("src", "dst")
                                 else int.from_bytes(val, "big"))
                elif pen == REVERSE_PEN and ie in REVERSE:
                    rec[REVERSE[ie]] = int.from_bytes(val, "big")
                elif pen == self.pen and ie in OURS:
                    rec[OURS[ie]] = val.decode("utf-8")
            recs.append(rec)
        return recs


def serve_udp(sock, out, pen):
    sessions = {}
    while True:
        buf, peer = sock.recvfrom(65535)
        key = f"{peer[0]}:{peer[1]}"
        if key not in sessions:
            sessions[key] = Session(out, pen, key)
        sessions[key].message(buf)


def read_exact(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def serve_tcp(sock, out, pen):
    while True:
        conn, peer = sock.accept()
        s = Session(out, pen, f"{peer[0]}:{peer[1]}")
        while True:
            head = read_exact(conn, 4)
            if head is None:
                break
            (length,) = struct.unpack_from("!H", head, 2)
            rest = read_exact(conn, length - 4)
            if rest is None:
                break
            s.message(head + rest)
        conn.close()


def main():
    ap = argparse.ArgumentParser()
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--udp", nargs=2, metavar=("ADDR", "PORT"))
    g.add_argument("--tcp", nargs=2, metavar=("ADDR", "PORT"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--pen", type=int, default=32473)
    ap.add_argument("--ready")
    a = ap.parse_args()
    addr, port = a.udp or a.tcp
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    sock = socket.socket(fam, socket.SOCK_DGRAM if a.udp else socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:  # a burst must not overrun a UDP collector that parses in Python
        sock.setsockopt(socket.SOL_SOCKET, 33, 32 << 20)  # SO_RCVBUFFORCE (root)
    except OSError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 << 20)
    sock.bind((addr, int(port)))
    if a.tcp:
        sock.listen(4)
    with open(a.out, "a", encoding="utf-8") as out:
        if a.ready:
            open(a.ready, "w").close()
        (serve_udp if a.udp else serve_tcp)(sock, out, a.pen)


if __name__ == "__main__":
    sys.exit(main())
