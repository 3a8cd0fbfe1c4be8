"""The stdlib HTTP server the tests' fake engines and model endpoints run on.

``socketserver`` prints a traceback to ``sys.stderr`` when a handler's thread
raises, and a client that drops its keep-alive connection while the thread is
reading the next request line makes ``readline`` raise ``ConnectionResetError``.
Tests that run the CLI in-process redirect ``sys.stderr`` to read the command's
own messages, so such a traceback from a server thread would land in them. A
client going away is not the server's error: it is dropped here; any other
exception is still printed.
"""

from __future__ import annotations

import sys
from http.server import ThreadingHTTPServer
from typing import Any


class LocalHTTPServer(ThreadingHTTPServer):
    """A threading server on which a client hanging up is not reported."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)
