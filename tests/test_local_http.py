"""The tests' local HTTP server stays silent when a client hangs up, and only then.

Seen in CI: a sweep's client dropped a keep-alive connection while the fake
engine's thread read the next request line; ``socketserver`` printed the
``ConnectionResetError`` traceback into the in-process CLI's redirected stderr,
and ``"Traceback" not in err`` failed on a correct command.
"""

from __future__ import annotations

import contextlib
import io
import socket
import struct
from http.server import BaseHTTPRequestHandler

import pytest

from local_http import LocalHTTPServer


def _report(server: LocalHTTPServer, error: BaseException) -> str:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            raise error
        except BaseException:
            server.handle_error(None, ("127.0.0.1", 1))
    return err.getvalue()


@pytest.fixture
def server():
    httpd = LocalHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    yield httpd
    httpd.server_close()


@pytest.mark.parametrize("error", [ConnectionResetError(104, "Connection reset by peer"),
                                   BrokenPipeError(32, "Broken pipe")])
def test_a_client_hanging_up_prints_nothing(server, error):
    assert _report(server, error) == ""


def test_any_other_error_in_a_handler_is_still_printed(server):
    assert "ValueError: a real bug" in _report(server, ValueError("a real bug"))


def test_a_reset_while_reading_the_request_line_leaves_stderr_empty():
    import threading

    handled = threading.Event()

    class Server(LocalHTTPServer):
        def shutdown_request(self, request):
            super().shutdown_request(request)
            handled.set()  # the handler's thread is done with this connection

    httpd = Server(("127.0.0.1", 0), BaseHTTPRequestHandler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        thread.start()
        try:
            client = socket.create_connection(httpd.server_address, timeout=5)
            client.sendall(b"GET / HT")  # part of a request line: the server waits for more
            # linger 0: close sends RST, as a client dropping its pooled connection may
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            client.close()
            assert handled.wait(5)
        finally:
            httpd.shutdown()
            httpd.server_close()
            thread.join(5)
    assert err.getvalue() == ""
