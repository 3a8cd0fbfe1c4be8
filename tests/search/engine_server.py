"""A local HTTP server answering as a search engine would, from recorded responses.

The server is real HTTP (stdlib ThreadingHTTPServer on 127.0.0.1, port 0,
see ``local_http``).
Each route ``(method, path)`` has a list of scripted :class:`Reply` objects:
a request takes the next one (the last one repeats). Bodies are the files
of ``recorded/`` (see its README: written from each engine's documented
formats). Every request is kept (method, path, query, body, headers), and
the server counts how many requests were in flight at once. Replies go out
with TCP_NODELAY (no Nagle delay on small answers). A reply can be held until
an event is set (``hold``): tests assert what the client did with events,
never with time.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from local_http import LocalHTTPServer

RECORDED = Path(__file__).parent / "recorded"


def recorded(name: str) -> bytes:
    return (RECORDED / name).read_bytes()


@dataclass
class Reply:
    """One scripted answer."""

    body: bytes | str = b"{}"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    content_type: str = "application/json; charset=UTF-8"
    hold: threading.Event | None = None
    """Answer only once this is set (or the server closes)."""
    body_for: Callable[[Seen], bytes] | None = None
    """The body made from the request (instead of ``body``)."""

    def data(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if (RECORDED / self.body).is_file():
            return recorded(self.body)
        return self.body.encode()


@dataclass
class Seen:
    method: str
    path: str
    query: list[tuple[str, str]]
    body: Any
    headers: dict[str, str]
    at: float


class EngineServer:
    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], list[Reply]] = {}
        self.requests: list[Seen] = []
        self.lock = threading.Lock()
        self.release = threading.Event()
        self.in_flight = 0
        self.max_in_flight = 0
        self.holds: list[threading.Event] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if len(raw) < length:
                    # the client closed before its body arrived (a run cancelled while this
                    # request was being sent): an engine runs no query for it, so none is seen
                    self.close_connection = True
                    return
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                seen = Seen(self.command, parts.path,
                            parse_qsl(parts.query, keep_blank_values=True), body,
                            dict(self.headers), time.monotonic())
                with server.lock:
                    server.requests.append(seen)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    script = server.routes.get((self.command, parts.path))
                    reply = (script.pop(0) if len(script) > 1 else script[0]) if script \
                        else Reply(b'{"error": "no route"}', status=404)
                try:
                    if reply.delay:
                        server.release.wait(reply.delay)
                    if reply.hold is not None:
                        reply.hold.wait(30)
                    data = reply.body_for(seen) if reply.body_for else reply.data()
                finally:
                    # counted out before the first byte is written: once a client has its
                    # answer, this request is no longer in flight (counting it out after the
                    # write raced the client's next step, seen in CI)
                    with server.lock:
                        server.in_flight -= 1
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout): nothing to answer

            do_GET = _answer
            do_POST = _answer
            do_PUT = _answer

        self.httpd = LocalHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def route(self, method: str, path: str, *replies: Reply) -> None:
        self.routes[(method, path)] = list(replies)
        self.holds.extend(r.hold for r in replies if r.hold is not None)

    def seen(self, path: str) -> list[Seen]:
        return [r for r in self.requests if r.path == path]

    def close(self) -> None:
        self.release.set()
        for hold in self.holds:
            hold.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
