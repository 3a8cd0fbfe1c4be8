"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, and small data.

The server is the real thing over HTTP (stdlib ThreadingHTTPServer on port
0): each request's body is kept, and the reply is chosen by a script from
the document marker ``[[doc-id]]`` found in the prompt. Replies are
chat.completion bodies as OpenAI documents them (id, object, created, model,
choices[].message, finish_reason, usage).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from local_http import LocalHTTPServer

MARKER = re.compile(r"\[\[([\w-]+)\]\]")


@dataclass
class Reply:
    """What the server sends for one request."""

    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    body: str | None = None  # a raw body instead of a chat completion
    prompt_tokens: int = 120
    completion_tokens: int = 6
    finish_reason: str = "stop"
    reasoning: str | None = None  # sent as message.reasoning_content (vLLM, DeepSeek)
    reset: bool = False  # close the connection without an answer


def completion_body(model: str, content: str, prompt_tokens: int, completion_tokens: int,
                    finish_reason: str = "stop", reasoning: str | None = None) -> str:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    return json.dumps({
        "id": "chatcmpl-9x8YzT2q",
        "object": "chat.completion",
        "created": 1732400000,
        "model": model,
        "system_fingerprint": "fp_local",
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": None,
            "finish_reason": finish_reason,
        }],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    })


Script = Callable[[str, int, dict[str, Any]], Reply]
"""(document id in the prompt, how many requests came for it before, body) -> Reply."""


class ScriptedServer:
    def __init__(self) -> None:
        self.script: Script = lambda doc, n, body: Reply('{"grade": 1}')
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.per_doc: dict[str, int] = {}
        self.lock = threading.Lock()
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                text = "\n".join(m["content"] for m in body["messages"])
                found = MARKER.search(text)
                doc = found.group(1) if found else ""
                with server.lock:
                    server.bodies.append(body)
                    server.paths.append(self.path)
                    server.headers.append(dict(self.headers))
                    n = server.per_doc.get(doc, 0)
                    server.per_doc[doc] = n + 1
                reply = server.script(doc, n, body)
                if reply.delay:
                    server.release.wait(reply.delay)
                if reply.reset:
                    self.close_connection = True
                    return  # no status line: the client sees the connection closed
                data = (reply.body if reply.body is not None else completion_body(
                    body["model"], reply.content or "", reply.prompt_tokens,
                    reply.completion_tokens, reply.finish_reason, reply.reasoning)).encode()
                if reply.status != 200 and reply.body is None:
                    data = json.dumps({"error": {"message": f"status {reply.status}",
                                                 "type": "server_error"}}).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout): nothing to answer

        self.httpd = LocalHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    @property
    def count(self) -> int:
        with self.lock:
            return len(self.bodies)

    def reset(self) -> None:
        with self.lock:
            self.bodies.clear()
            self.paths.clear()
            self.headers.clear()
            self.per_doc.clear()

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def server():
    s = ScriptedServer()
    yield s
    s.stop()


def grades_script(grades: dict[str, str]) -> Script:
    """Answer each document's requests with a fixed content."""
    return lambda doc, n, body: Reply(grades[doc])


class SleepRecorder:
    """An injectable sleep: records the delays and yields without waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        import asyncio

        self.delays.append(seconds)
        await asyncio.sleep(0)


@pytest.fixture
def fast_sleep():
    return SleepRecorder()


DOCS = {
    "d1": ("Cats", "The domestic cat is a small carnivorous mammal."),
    "d2": ("Dogs", "Dogs were domesticated from wolves."),
    "d3": ("Cat food", "What to feed a cat: meat, and water."),
    "d4": ("Weather", "Rain is expected tomorrow."),
    "d5": ("Cat sleep", "Cats sleep twelve to sixteen hours a day."),
    "d6": ("Stocks", "Markets fell on Monday."),
}
QUERIES = {"q1": "what do cats eat", "q2": "how long do cats sleep"}
RUN = [("q1", "d3", 3.0), ("q1", "d1", 2.0), ("q1", "d2", 1.0), ("q1", "d4", 0.5),
       ("q2", "d5", 3.0), ("q2", "d1", 2.0), ("q2", "d6", 1.0)]


@pytest.fixture
def collection(tmp_path: Path) -> dict[str, Path]:
    """queries.tsv, corpus.jsonl (each text carries its [[id]] marker), run.txt."""
    queries = tmp_path / "queries.tsv"
    queries.write_text("query_id\ttext\n" + "".join(f"{q}\t{t}\n" for q, t in QUERIES.items()))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(
        json.dumps({"id": d, "title": title, "text": f"{text} [[{d}]]", "url": "x"}) + "\n"
        for d, (title, text) in DOCS.items()
    ))
    run = tmp_path / "run.txt"
    run.write_text("".join(f"{q} Q0 {d} {i} {s} sys\n" for i, (q, d, s) in enumerate(RUN, 1)))
    return {"queries": queries, "docs": corpus, "run": run, "dir": tmp_path}


def judge_collection(server: ScriptedServer, collection: dict[str, Path],
                     sleep: SleepRecorder, **options: Any) -> Any:
    """``rankscope.judge`` on the collection's run with the scripted server (and ``options``)."""
    from rankscope.llm_judge.api import judge

    given: dict[str, Any] = dict(
        endpoint=server.url, model="tiny-judge", queries=collection["queries"],
        docs=collection["docs"], runs=[collection["run"]], sleep=sleep, timeout=5.0)
    given.update(options)
    return judge(**given)


def csv_rows(path: Path) -> list[dict[str, str]]:
    """The rows of a CSV grades file."""
    import csv

    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError("timed out waiting")
        time.sleep(0.01)
