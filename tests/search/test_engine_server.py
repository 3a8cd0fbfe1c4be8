"""The fake engine's own count of requests in flight, which tests read right after a client
has its answer (test_remote_kinds, test_tries): a request must be counted out before the
first byte of its answer is written, or a fast client sees it still in flight (seen in CI:
``in_flight == 2`` after search() returned)."""

from __future__ import annotations

import http.client

from .engine_server import Reply


def test_a_request_is_counted_out_before_its_client_has_the_answer(engine):
    engine.route("GET", "/a", Reply(b'{"ok": true}'))
    host, port = engine.url.removeprefix("http://").split(":")
    seen_in_flight = []
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        for _ in range(300):
            connection.request("GET", "/a")
            answer = connection.getresponse()
            answer.read()
            seen_in_flight.append(engine.in_flight)  # read as soon as the answer is in
    finally:
        connection.close()
    assert len(engine.requests) == 300
    assert seen_in_flight == [0] * 300
