#!/usr/bin/env python3
"""A misbehaving OpenAI-compatible server for the fault-matrix test (fault_matrix_test.cpp).

    fault_server.py --port PORT --fault KIND

Listens on 127.0.0.1 only. GET /v1/models answers model "m". The first generation request (the
client's initial test run) is answered well; every later one gets the fault KIND:

  ok            a well-formed stream of 4 tokens (the baseline)
  400 500 503   that HTTP status with an OpenAI error body
  reset         2 events, then a TCP reset
  stall         1 event, then nothing for 60 s (the client's --request-timeout-sec ends it)
  malformed     1 event, then an event whose JSON is cut, then the rest and [DONE]
  split         a well-formed stream written a few bytes at a time (events and chunk framing
                split across writes)
  chunked       1 event, then a chunk whose size line is not hex, then the connection closes
  error-event   200, 1 event, then `data: {"error": …}` and the end of the body
  slow-headers  the status line after 1.5 s, then a well-formed stream
  huge          a well-formed stream whose second event carries 8 MiB of text
  cr-only       a well-formed stream whose SSE lines end in CR alone (valid SSE)
  echo-auth     401 with the request's Authorization header in the error message

--host ::1 listens on IPv6 loopback only (a `localhost` that resolves to both families).
--tls CERT KEY serves HTTPS with that certificate (tls_test.cpp: a private CA). GET /metrics
answers one Prometheus gauge.

Standard library only. Stops on SIGTERM.
"""
import argparse
import json
import signal
import socket
import ssl
import struct
import sys
import threading
import time

TOKENS = 4
lock = threading.Lock()
generation_requests = 0


def read_request(conn, buf):
    """One request: (method, path, headers, body, rest of buffer), or None when the peer left."""
    while b"\r\n\r\n" not in buf:
        data = conn.recv(65536)
        if not data:
            return None
        buf += data
    head, _, buf = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(buf) < length:
        data = conn.recv(65536)
        if not data:
            return None
        buf += data
    return method, path, headers, buf[:length], buf[length:]


def reply(conn, status, body, content_type="application/json"):
    reason = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 500: "Internal Server Error",
              503: "Service Unavailable"}.get(status, "Error")
    head = (f"HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\n"
            f"content-length: {len(body)}\r\n\r\n")
    conn.sendall(head.encode() + body)


def error_body(status, message):
    kind = "BadRequestError" if status < 500 else "InternalServerError"
    return json.dumps({"error": {"message": message, "type": kind, "param": None,
                                 "code": status}}).encode()


def event(text, index, chat, finish=None):
    if chat:
        choice = {"index": 0, "delta": {"content": text}, "finish_reason": finish}
        obj = "chat.completion.chunk"
    else:
        choice = {"index": 0, "text": text, "finish_reason": finish}
        obj = "text_completion"
    payload = {"id": "cmpl-fault", "object": obj, "created": 0, "model": "m",
               "choices": [choice]}
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def usage_event(prompt_tokens):
    payload = {"id": "cmpl-fault", "object": "text_completion", "created": 0, "model": "m",
               "choices": [], "usage": {"prompt_tokens": prompt_tokens,
                                        "completion_tokens": TOKENS,
                                        "total_tokens": prompt_tokens + TOKENS}}
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def chunk(data):
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


STREAM_HEAD = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
               b"transfer-encoding: chunked\r\n\r\n")


def stream_events(chat, usage, huge=False):
    events = []
    for k in range(TOKENS):
        text = " tok" if not (huge and k == 1) else " " + "x" * (8 << 20)
        events.append(event(text, k, chat, "length" if k == TOKENS - 1 else None))
    if usage:
        events.append(usage_event(8))
    events.append(b"data: [DONE]\n\n")
    return events


def serve_generation(conn, fault, chat, usage, headers):
    if fault == "echo-auth":
        reply(conn, 401, error_body(401, "refused credentials: " + headers.get("authorization", "")))
        return True
    if fault in ("400", "500", "503"):
        status = int(fault)
        reply(conn, status, error_body(status, f"fault server: HTTP {status} as asked"))
        return True
    if fault == "slow-headers":
        time.sleep(1.5)
        fault = "ok"
    if fault in ("ok", "huge"):
        conn.sendall(STREAM_HEAD + b"".join(chunk(e) for e in stream_events(
            chat, usage, huge=fault == "huge")) + b"0\r\n\r\n")
        return True
    if fault == "cr-only":
        events = [e.replace(b"\n", b"\r") for e in stream_events(chat, usage)]
        conn.sendall(STREAM_HEAD + b"".join(chunk(e) for e in events) + b"0\r\n\r\n")
        return True
    if fault == "split":
        wire = STREAM_HEAD + b"".join(chunk(e) for e in stream_events(chat, usage)) + b"0\r\n\r\n"
        for i in range(0, len(wire), 7):
            conn.sendall(wire[i:i + 7])
            time.sleep(0.002)
        return True
    conn.sendall(STREAM_HEAD + chunk(event(" tok", 0, chat)))
    if fault == "reset":
        conn.sendall(chunk(event(" tok", 1, chat)))
        time.sleep(0.05)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()
        return False
    if fault == "stall":
        conn.settimeout(60)
        try:
            conn.recv(1)  # until the client gives up (or 60 s)
        except OSError:
            pass
        return False
    if fault == "malformed":
        conn.sendall(chunk(b'data: {"id":"cmpl-fault","choices":[{"index":0,"te\n\n'))
        rest = stream_events(chat, usage)[1:]
        conn.sendall(b"".join(chunk(e) for e in rest) + b"0\r\n\r\n")
        return True
    if fault == "chunked":
        conn.sendall(b"zz\r\nnot a chunk\r\n")
        time.sleep(0.05)
        return False
    if fault == "error-event":
        conn.sendall(chunk(b"data: " + error_body(500, "fault server: the engine died") +
                           b"\n\n") + b"0\r\n\r\n")
        return True
    raise SystemExit(f"fault_server.py: unknown fault {fault!r}")


def handle(conn, fault, tls):
    global generation_requests
    buf = b""
    try:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if tls is not None:
            conn = tls.wrap_socket(conn, server_side=True)  # the handshake, in this thread
        while True:
            request = read_request(conn, buf)
            if request is None:
                return
            method, path, headers, body, buf = request
            if method == "GET" and path == "/v1/models":
                reply(conn, 200, json.dumps({"object": "list", "data": [
                    {"id": "m", "object": "model", "root": "m", "max_model_len": 4096}]}).encode())
                continue
            if method == "GET" and path == "/metrics":
                reply(conn, 200, b"# TYPE vllm:num_requests_running gauge\n"
                      b"vllm:num_requests_running 0\n", "text/plain; version=0.0.4")
                continue
            if method != "POST" or path not in ("/v1/completions", "/v1/chat/completions"):
                reply(conn, 404, error_body(404, "Not Found"))
                continue
            try:
                req = json.loads(body)
            except ValueError:
                req = {}
            usage = bool((req.get("stream_options") or {}).get("include_usage"))
            with lock:
                generation_requests += 1
                first = generation_requests == 1
            if not serve_generation(conn, "ok" if first else fault,
                                    path == "/v1/chat/completions", usage, headers):
                return
    except OSError:
        pass
    finally:
        try:
            conn.close()
        except OSError:
            pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--fault", required=True)
    parser.add_argument("--host", default="127.0.0.1", choices=["127.0.0.1", "::1"])
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    args = parser.parse_args()
    tls = None
    if args.tls:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(args.tls[0], args.tls[1])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    family = socket.AF_INET6 if args.host == "::1" else socket.AF_INET
    server = socket.socket(family, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((args.host, args.port))
    server.listen(128)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=handle, args=(conn, args.fault, tls), daemon=True).start()


if __name__ == "__main__":
    main()
