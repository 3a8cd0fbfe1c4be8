"""The LLM judge client keeps the same redirect and host rules as the search client.

Two scripted OpenAI-compatible servers on 127.0.0.1 (two ports: two origins).
"""

from __future__ import annotations

import asyncio

import pytest

from rankscope.errors import JudgeError
from rankscope.llm_judge.client import ChatClient

from .conftest import Reply, ScriptedServer

MESSAGE = [{"role": "user", "content": "grade [[d1]]"}]


@pytest.fixture
def other():
    s = ScriptedServer()
    yield s
    s.stop()


def _ask(client: ChatClient) -> str | None:
    async def go() -> str | None:
        try:
            done = await client.complete(MESSAGE, {})
            return None if done is None else done.text
        finally:
            await client.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("header", ["Authorization", "api-key"])
def test_the_key_never_follows_a_redirect_to_another_origin(server, other, header):
    server.script = lambda doc, n, body: Reply(
        status=307, headers={"Location": other.url + "/chat/completions"})
    other.script = lambda doc, n, body: Reply('{"grade": 2}')
    text = _ask(ChatClient(server.url, "m", api_key="sk-secret-1", auth_header=header,
                           max_retries=0))
    assert text == '{"grade": 2}'
    assert any(k.lower() == header.lower() for k in server.headers[0])
    assert other.count == 1
    assert not any(k.lower() == header.lower() for k in other.headers[0])
    assert "sk-secret-1" not in repr(other.headers[0])
    assert other.bodies[0] == server.bodies[0]  # 307: the same POST, the same body


def test_a_redirect_that_turns_the_post_into_a_get_stops_the_run(server, other):
    server.script = lambda doc, n, body: Reply(
        status=302, headers={"Location": other.url + "/chat/completions"})
    with pytest.raises(JudgeError, match=r"answered 302.*GET without the body"):
        _ask(ChatClient(server.url, "m", max_retries=3))
    assert server.count == 1 and other.count == 0


def test_a_refused_host_stops_the_run_before_anything_is_sent(server):
    from rankscope.outbound.hosts import HostPolicy

    with pytest.raises(JudgeError, match=r"127.0.0.1, a loopback address"):
        _ask(ChatClient(server.url, "m", max_retries=3, outbound=HostPolicy()))
    assert server.count == 0
    allowed = ChatClient(server.url, "m", outbound=HostPolicy.parse(["127.0.0.1"]))
    assert _ask(allowed) == '{"grade": 1}'
