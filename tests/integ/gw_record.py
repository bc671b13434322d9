#!/usr/bin/env python3
"""A recording HTTPS upstream for the gateway attack test (tests/integ/gw_attack.sh):
everything a connection carries, decoded, goes to LOG, so the test can say
that a secret never reached a host it does not belong to.

  ALPN http/1.1  the raw bytes of each connection as received (HTTP/1 is
                 text: nothing hides in an encoding); every request that
                 ends in an empty line is answered 200 with a short body
  ALPN h2        every header and trailer field after HPACK decoding (the
                 gateway's encoder may Huffman-code a value) and every DATA
                 payload; each stream answered 200 (python3-h2)
  TRACE          (HTTP/1) reflected as a server does (RFC 9110 9.3.8)

Usage: gw_record.py ADDR CERT KEY LOG READY
"""
import socket
import ssl
import sys
import threading

import h2.config
import h2.connection
import h2.events

LOCK = threading.Lock()


def log(path, what):
    with LOCK, open(path, "ab") as f:
        f.write(what + b"\n")


def serve_h1(s, path):
    buf = b""
    while True:
        d = s.recv(65536)
        if not d:
            return
        log(path, b"h1 " + d)
        buf += d
        # answer each head; bodies are recorded, not understood
        while b"\r\n\r\n" in buf:
            head, buf = buf.split(b"\r\n\r\n", 1)
            if head.startswith(b"TRACE "):
                # RFC 9110 9.3.8: the request as received, reflected
                body = head + b"\r\n\r\n"
                s.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: message/http\r\n"
                          b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            else:
                s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")


def serve_h2(s, path):
    c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False,
                                                             header_encoding=None,
                                                             validate_inbound_headers=False))
    c.initiate_connection()
    s.sendall(c.data_to_send())
    while True:
        d = s.recv(65536)
        if not d:
            return
        for ev in c.receive_data(d):
            if isinstance(ev, (h2.events.RequestReceived, h2.events.TrailersReceived)):
                for k, v in ev.headers:
                    log(path, b"h2 %s: %s" % (k, v))
            elif isinstance(ev, h2.events.DataReceived):
                log(path, b"h2 data " + ev.data)
                c.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            if isinstance(ev, h2.events.StreamEnded):
                c.send_headers(ev.stream_id, [(b":status", b"200")], end_stream=True)
        s.sendall(c.data_to_send())


def conn(s, path):
    try:
        if s.selected_alpn_protocol() == "h2":
            serve_h2(s, path)
        else:
            serve_h1(s, path)
    except Exception as e:  # a connection the gateway cut: recorded, not fatal
        log(path, b"error " + repr(e).encode())
    finally:
        s.close()


def main():
    addr, cert, key, path, ready = sys.argv[1:6]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, 443))
    ls.listen(128)
    open(ready, "w").close()
    while True:
        s, _ = ls.accept()
        try:
            s = ctx.wrap_socket(s, server_side=True)
        except (ssl.SSLError, OSError):
            s.close()
            continue
        threading.Thread(target=conn, args=(s, path), daemon=True).start()


if __name__ == "__main__":
    main()
