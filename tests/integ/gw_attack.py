#!/usr/bin/env python3
"""Attacks on netd's API gateway from inside a sandbox (tests/integ/gw_attack.sh).

Every attack runs on a connection of its own while a kept-alive connection
opened before it waits; afterwards a good request goes on that old
connection and on a new one.  One line per attack:

  NAME attacked=<statuses or how it ended> old=<status> new=<status>

where the attacked connection's statuses are the HTTP/1 status codes it got
in order ("400"), an HTTP/2 ending ("goaway", "rst"), or how the socket
ended: "closed" (FIN or RST after the answer), "reset" (no TLS at all),
"open" (nothing within the wait: a hang).  Trusts $SSL_CERT_FILE.

Usage: gw_attack.py GROUP PLACEHOLDER   (GROUP: h1, smuggle, tls, h2, flood)
"""
import os
import re
import socket
import ssl
import struct
import sys
import time

API = "api.gw.dt.example"      # the credential's host (nginx)
REC = "rec.gw.dt.example"      # a gateway name without that credential (gw_record.py)
PH = sys.argv[2] if len(sys.argv) > 2 else ""
CA = os.environ.get("SSL_CERT_FILE")


def ctx(alpn):
    c = ssl.create_default_context(cafile=CA)
    c.set_alpn_protocols(alpn)
    return c


def tls(name, alpn=("http/1.1",), addr=None, sni=None):
    s = socket.create_connection((addr or name, 443), timeout=8)
    return ctx(list(alpn)).wrap_socket(s, server_hostname=sni or name)


def read_all(s, wait=6):
    """Everything until the peer ends the connection; how it ended."""
    out = b""
    s.settimeout(wait)
    try:
        while True:
            d = s.recv(65536)
            if not d:
                return out, "closed"
            out += d
    except socket.timeout:
        return out, "open"
    except (ssl.SSLError, OSError):
        return out, "closed"


def statuses(out):
    return [m.decode() for m in re.findall(rb"^HTTP/1\.1 (\d{3}) ", out, re.M)]


def get(s, host=API, path="/v1/good"):
    """One good request on @s; its status, or what went wrong."""
    try:
        s.settimeout(8)
        s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n"
                   % (path, host, PH)).encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            d = s.recv(65536)
            if not d:
                return "eof"
            buf += d
        head, body = buf.split(b"\r\n\r\n", 1)
        m = re.search(rb"content-length: *(\d+)", head, re.I)
        n = int(m.group(1)) if m else 0
        while len(body) < n:
            d = s.recv(65536)
            if not d:
                return "eof"
            body += d
        return head.split(b" ")[1].decode()
    except (OSError, ssl.SSLError, IndexError) as e:
        return type(e).__name__


def around(name, attack):
    """Run @attack with an old connection waiting; print the line."""
    old = tls(API)
    try:
        res = attack()
    except Exception as e:  # noqa: BLE001 - the line says what it was
        res = "exc:" + type(e).__name__
    new = tls(API)
    print("%s attacked=%s old=%s new=%s" % (name, res, get(old), get(new)), flush=True)
    old.close()
    new.close()


def raw_h1(payload, host=API, wait=6, addr=None):
    def run():
        s = tls(host, addr=addr)
        try:
            s.sendall(payload)
        except OSError:
            pass
        out, how = read_all(s, wait)
        s.close()
        st = statuses(out)
        return ",".join(st) + ("+" if st else "") + how
    return run


def req(lines, body=b""):
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


# ---- HTTP/1 smuggling ----------------------------------------------------------

def group_h1():
    H = "Host: " + API
    cases = {
        "two-cl": req(["POST /v1/x HTTP/1.1", H, "Content-Length: 3", "Content-Length: 3"], b"abc"),
        "cl-te": req(["POST /v1/x HTTP/1.1", H, "Content-Length: 5",
                      "Transfer-Encoding: chunked"], b"0\r\n\r\n"),
        "te-obsfold": req(["POST /v1/x HTTP/1.1", H, "Transfer-Encoding:", " chunked"],
                          b"0\r\n\r\n"),
        "bare-lf": ("GET /v1/x HTTP/1.1\n%s\n\n" % H).encode(),
        "ws-line": req(["GET /v1/x HTTP/1.1", " " + H, H]),
        "head-33k": req(["GET /v1/x HTTP/1.1", H, "X-Big: " + "a" * (33 * 1024)]),
        "101-fields": req(["GET /v1/x HTTP/1.1", H] + ["X-F%d: v" % i for i in range(101)]),
        "chunk-overflow": req(["POST /v1/x HTTP/1.1", H, "Transfer-Encoding: chunked"],
                              b"1" + b"0" * 16 + b"\r\nabc\r\n0\r\n\r\n"),
        "chunk-lf": req(["POST /v1/x HTTP/1.1", H, "Transfer-Encoding: chunked"],
                        b"3\nabc\n0\n\n"),
        "te-identity": req(["POST /v1/x HTTP/1.1", H, "Transfer-Encoding: chunked, identity"],
                           b"0\r\n\r\n"),
        "cl-plus": req(["POST /v1/x HTTP/1.1", H, "Content-Length: +3"], b"abc"),
        "cl-list": req(["POST /v1/x HTTP/1.1", H, "Content-Length: 3, 3"], b"abc"),
        "h10-chunked": req(["POST /v1/x HTTP/1.0", H, "Transfer-Encoding: chunked"], b"0\r\n\r\n"),
        "nul-value": req(["GET /v1/x HTTP/1.1", H, "X-A: a\x00b"]),
        "space-colon": req(["GET /v1/x HTTP/1.1", H, "Content-Length : 0"]),
        "two-hosts": req(["GET /v1/x HTTP/1.1", H, "Host: " + REC]),
        "pipelined-host": req(["GET /v1/a HTTP/1.1", H, "Authorization: Bearer " + PH])
        + req(["GET /v1/b HTTP/1.1", "Host: " + REC, "Authorization: Bearer " + PH]),
        "absolute-form": req(["GET https://%s/v1/x HTTP/1.1" % REC, H,
                              "Authorization: Bearer " + PH]),
        "host-placeholder": req(["GET /v1/x HTTP/1.1", "Host: " + PH]),
        "host-userinfo": req(["GET /v1/x HTTP/1.1", "Host: %s@%s" % (API, REC)]),
        "host-port0": req(["GET /v1/x HTTP/1.1", "Host: %s:0443" % API]),
        "http09": b"GET /v1/x\r\n\r\n",
        "http2-version": req(["GET /v1/x HTTP/2.0", H]),
        "upgrade-h2c": req(["GET /v1/x HTTP/1.1", H, "Upgrade: h2c", "Connection: Upgrade"]),
        # a Host the record cannot carry as it is: obs-text, and UTF-8 the
        # record's 253 bytes would cut in a character's middle
        "host-obstext": b"GET /v1/host-obstext HTTP/1.1\r\nHost: evil\xff.example\r\n\r\n",
        "host-utf8-cut": b"GET /v1/host-utf8-cut HTTP/1.1\r\nHost: " + b"a" * 252
        + "\u00e9".encode() + b"\r\n\r\n",
    }
    for name, payload in cases.items():
        around(name, raw_h1(payload))


# ---- the placeholder toward a host that is not its credential's -------------------

def group_smuggle():
    H = "Host: " + REC
    A = "Authorization: Bearer " + PH
    half = len(PH) // 2
    cases = {
        "own-header": req(["GET /v1/own HTTP/1.1", H, A]),
        "own-header-upper": req(["GET /v1/upper HTTP/1.1", H, "AUTHORIZATION: Bearer " + PH]),
        "own-header-lower": req(["GET /v1/lower HTTP/1.1", H, "authorization: Bearer " + PH]),
        "query": req(["GET /v1/q?key=%s HTTP/1.1" % PH, H]),
        "other-header": req(["GET /v1/oh HTTP/1.1", H, "X-Api-Key: " + PH]),
        "cookie": req(["GET /v1/ck HTTP/1.1", H, "Cookie: k=" + PH]),
        "percent": req(["GET /v1/%s HTTP/1.1" % "".join("%%%02X" % ord(c) for c in PH), H]),
        "split-headers": req(["GET /v1/split HTTP/1.1", H, "Authorization: Bearer " + PH[:half],
                              "Authorization: " + PH[half:]]),
        "trailer": req(["POST /v1/trailer HTTP/1.1", H, "Transfer-Encoding: chunked",
                        "Trailer: Authorization"],
                       b"3\r\nabc\r\n0\r\n" + A.encode() + b"\r\n\r\n"),
        "body": req(["POST /v1/body HTTP/1.1", H, "Content-Length: %d" % len(A)], A.encode()),
    }
    for name, payload in cases.items():
        around(name, raw_h1(payload, host=REC))
    # the SNI of the credential's host, the address of another name
    around("sni-api-at-rec-addr", raw_h1(req(["GET /v1/x HTTP/1.1", "Host: " + API, A]),
                                          addr=socket.gethostbyname(REC)))
    # HTTP/2 to rec.gw: trailers, a header, the query, split cookies
    for name, hdrs, trailers in [
            ("h2-authorization", [("authorization", "Bearer " + PH)], None),
            ("h2-query", [], None),
            ("h2-trailer", [], [("authorization", "Bearer " + PH)]),
            ("h2-cookie-split", [("cookie", "a=" + PH[:half]), ("cookie", "b=" + PH[half:])], None),
    ]:
        path = "/v1/h2q?k=" + PH if name == "h2-query" else "/v1/" + name
        around(name, h2_request(REC, path, hdrs, trailers))


# ---- HTTP/2 frames by hand ----------------------------------------------------------

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST, SETTINGS, PING, GOAWAY, CONT = 0, 1, 3, 4, 6, 7, 9


def frame(ftype, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", sid) + payload


def hint(n, prefix):
    """An HPACK integer (RFC 7541 5.1) with a @prefix-bit prefix, first byte's flags 0."""
    lim = (1 << prefix) - 1
    if n < lim:
        return bytes([n])
    out, n = [lim], n - lim
    while n >= 128:
        out.append(n % 128 + 128)
        n //= 128
    return bytes(out + [n])


def hpack(fields):
    """Literal fields without indexing, new names, no Huffman (RFC 7541 6.2.2)."""
    b = b""
    for k, v in fields:
        k, v = k.encode(), v.encode()
        b += b"\x00" + hint(len(k), 7) + k + hint(len(v), 7) + v
    return b


def h2_head(host, path, extra=(), method="GET"):
    return hpack([(":method", method), (":scheme", "https"), (":authority", host),
                  (":path", path)] + list(extra))


def h2_read(s, wait=6):
    """Frames until the peer ends or @wait passes: (frames, how it ended)."""
    out, how = read_all(s, wait)
    frames, i = [], 0
    while i + 9 <= len(out):
        n = int.from_bytes(out[i:i + 3], "big")
        frames.append((out[i + 3], out[i + 4], int.from_bytes(out[i + 5:i + 9], "big") & 0x7fffffff,
                       out[i + 9:i + 9 + n]))
        i += 9 + n
    return frames, how


def h2_outcome(frames, how):
    for t, _, sid, p in frames:
        if t == GOAWAY:
            return "goaway(%d)+%s" % (int.from_bytes(p[4:8], "big"), how)
    for t, _, sid, p in frames:
        if t == HEADERS and sid:
            return "headers+" + how
    for t, _, sid, p in frames:
        if t == RST:
            return "rst+" + how
    return how


def h2_status(frames, sid):
    """The :status of stream @sid if it is one of the static table's (RFC 7541 A)."""
    st = {0x88: "200", 0x89: "204", 0x8a: "206", 0x8b: "304", 0x8c: "400", 0x8d: "404", 0x8e: "500"}
    for t, _, fsid, p in frames:
        if t == HEADERS and fsid == sid and p:
            if p[0] in st:
                return st[p[0]]
            m = re.match(rb"[\x08\x48](?:\x03)(\d{3})", p)  # :status literal
            if m:
                return m.group(1).decode()
            return "headers"
    for t, _, fsid, p in frames:
        if t == RST and fsid == sid:
            return "rst(%d)" % int.from_bytes(p, "big")
    return "none"


def h2_open(host=API):
    s = tls(host, alpn=("h2",))
    if s.selected_alpn_protocol() != "h2":
        raise RuntimeError("no h2")
    return s


def h2_request(host, path, hdrs, trailers):
    def run():
        s = h2_open(host)
        msg = PREFACE + frame(SETTINGS, 0, 0)
        if trailers:
            msg += frame(HEADERS, 4, 1, h2_head(host, path, hdrs, "POST"))
            msg += frame(DATA, 0, 1, b"abc")
            msg += frame(HEADERS, 5, 1, hpack(trailers))
        else:
            msg += frame(HEADERS, 5, 1, h2_head(host, path, hdrs))
        s.sendall(msg)
        frames, how = h2_read(s, 3)
        s.close()
        return h2_status(frames, 1)
    return run


def h2_attack(build, host=API, wait=8):
    def run():
        s = h2_open(host)
        try:
            for chunk in build():
                s.sendall(chunk)
        except OSError:
            pass
        frames, how = h2_read(s, wait)
        s.close()
        return h2_outcome(frames, how)
    return run


def group_h2():
    def rapid_reset():
        out = PREFACE + frame(SETTINGS, 0, 0)
        for i in range(5000):
            sid = 1 + 2 * i
            out += frame(HEADERS, 5, sid, h2_head(API, "/v1/rr")) + frame(RST, 0, sid, b"\0\0\0\x08")
        yield out

    def continuation():
        yield PREFACE + frame(SETTINGS, 0, 0) + frame(HEADERS, 1, 1, h2_head(API, "/v1/c"))
        yield frame(CONT, 0, 1, b"") * 100000

    def continuation_big():
        yield PREFACE + frame(SETTINGS, 0, 0) + frame(HEADERS, 1, 1, h2_head(API, "/v1/c"))
        yield frame(CONT, 0, 1, hpack([("x-pad", "a" * 16000)])) * 16

    def settings():
        yield PREFACE + frame(SETTINGS, 0, 0) * 100000

    def pings():
        yield PREFACE + frame(SETTINGS, 0, 0) + frame(PING, 0, 0, b"12345678") * 100000

    def tiny_data():
        yield PREFACE + frame(SETTINGS, 0, 0) + frame(HEADERS, 4, 1, h2_head(API, "/v1/d", (), "POST"))
        for _ in range(10):
            yield frame(DATA, 0, 1, b"x") * 10000
        yield frame(DATA, 1, 1, b"")

    def empty_data():
        yield PREFACE + frame(SETTINGS, 0, 0) + frame(HEADERS, 4, 1, h2_head(API, "/v1/d", (), "POST"))
        yield frame(DATA, 0, 1, b"") * 100000

    def bad_preface():
        yield b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n" + frame(SETTINGS, 0, 0)

    def h1_bytes():
        yield req(["GET /v1/x HTTP/1.1", "Host: " + API])

    def zero_window():
        # SETTINGS_INITIAL_WINDOW_SIZE 0: responses can never flow; then many streams
        out = PREFACE + frame(SETTINGS, 0, 0, struct.pack(">HI", 4, 0))
        for i in range(100):
            out += frame(HEADERS, 5, 1 + 2 * i, h2_head(API, "/v1/zw"))
        yield out

    for name, fn in [("rapid-reset", rapid_reset), ("continuation-flood", continuation),
                     ("continuation-64k", continuation_big), ("settings-flood", settings),
                     ("ping-flood", pings), ("tiny-data-100k", tiny_data),
                     ("empty-data-100k", empty_data), ("bad-preface", bad_preface),
                     ("alpn-h2-h1-bytes", h1_bytes), ("zero-window", zero_window)]:
        around(name, h2_attack(fn, wait=4 if name == "zero-window" else 8))
    # a good HTTP/2 request still works
    around("h2-good", h2_request(API, "/v1/h2good", [("authorization", "Bearer " + PH)], None))


# ---- TLS garbage --------------------------------------------------------------------

def client_hello(sni, alpn=("http/1.1",)):
    """A real ClientHello's bytes for @sni (None: no SNI), from an unfinished handshake."""
    c = ctx(list(alpn))
    c.check_hostname = False
    i, o = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = c.wrap_bio(i, o, server_hostname=sni)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return o.read()


def plain(payload, addr, wait=12, trickle=None):
    """TCP to @addr:443, @payload, then silence (or @trickle bytes slowly): how it ended."""
    def run():
        s = socket.create_connection((addr, 443), timeout=8)
        s.sendall(payload)
        t0 = time.monotonic()
        for b in trickle or b"":
            time.sleep(3)
            try:
                s.sendall(bytes([b]))
            except OSError:
                s.close()
                return "closed@%ds" % (time.monotonic() - t0)
        out, how = read_all(s, wait)
        s.close()
        if how == "closed" and out.startswith(b"\x15"):
            how = "alert+closed"
        return "%s@%ds" % (how, time.monotonic() - t0)
    return run


def tls_try(sni, addr, alpn=("http/1.1",)):
    def run():
        s = socket.create_connection((addr, 443), timeout=8)
        c = ctx(list(alpn))
        c.check_hostname = False
        c.verify_mode = ssl.CERT_NONE
        try:
            t = c.wrap_socket(s, server_hostname=sni)
        except (ssl.SSLError, OSError) as e:
            return "refused:" + type(e).__name__
        t.close()
        return "handshake"
    return run


def group_tls():
    api = socket.gethostbyname(API)
    rec = socket.gethostbyname(REC)
    hello = client_hello(API)
    around("random-bytes", plain(os.urandom(4096), api))
    around("truncated-hello", plain(hello[:len(hello) // 2], api))
    # the slowloris of the peek: one byte of the rest every 3 s, past the 10 s deadline
    around("trickled-hello", plain(hello[:20], api, wait=3, trickle=hello[20:27]))
    around("no-sni", tls_try(None, api))
    around("sni-not-allowed", tls_try("evil.example", api))
    around("sni-api-at-rec-addr", tls_try(API, rec))
    around("sni-ip-literal", tls_try(api, api))
    around("sni-trailing-dot", tls_try(API + ".", api))
    around("sni-upper", tls_try(API.upper(), api))


if __name__ == "__main__":
    {"h1": group_h1, "smuggle": group_smuggle, "h2": group_h2, "tls": group_tls}[sys.argv[1]]()
