"""A chat-completions server on loopback that plays scripted replies (tests and benchmarks).

It speaks enough of the OpenAI HTTP protocol for the official client: ``POST .../chat/completions``
answers with a ``chat.completion`` object, or with an error status and an OpenAI-style error body.
Replies come from a script (a list consumed in order) or from a function of the request, after an
optional delay (injected latency, or a stall that makes the client time out). Every request body
and its headers are kept for assertions.

Run as a script it serves ``benchmark_model`` (a deterministic model that plays short episodes in
every tool-call mode) and prints its base URL::

    python tests/agents/chat_server.py --latency 0.2

or, with ``--bodies FILE`` (a JSON list), answers every request with the next of those bodies, as
they are (cycling): malformed replies from a server in a process of its own.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a completion (``content`` and/or ``tool_calls``) or an error ``status``."""

    content: str | None = None
    tool_calls: tuple[tuple[str, str], ...] = ()  # (name, raw arguments text)
    status: int = 200
    error: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    finish_reason: str | None = None
    call_ids: tuple[str, ...] = ()  # ids to give the tool calls (default: call_<n> from a counter)
    body: Any = None  # sent as it is instead (a malformed reply): JSON, or bytes sent raw
    drip: float = 0.0  # seconds between the body's bytes (a slow-drip reply)
    drop: bool = False  # close the connection without an answer
    echo_headers: bool = False  # an error whose message repeats the request's headers


def say(content: str) -> Reply:
    return Reply(content=content)


def call(name: str, arguments: str = "{}", content: str | None = None) -> Reply:
    return Reply(content=content, tool_calls=((name, arguments),))


def error(
    status: int, message: str, *, code: str | None = None, kind: str | None = None, **headers: str
) -> Reply:
    return Reply(
        status=status,
        error={"message": message, "type": kind or "server_error", "code": code, "param": None},
        headers={k.replace("_", "-"): v for k, v in headers.items()},
    )


Responder = Callable[[dict[str, Any]], Reply]


class ChatServer:
    """``with ChatServer(script) as server: ... server.url ...``; ``server.requests`` holds the bodies."""

    def __init__(
        self, script: Sequence[Reply] | Responder, *, latency: float = 0.0, slots: int | None = None
    ) -> None:
        self.latency = latency
        # At most ``slots`` replies in the making at once (a model server's batch): the endpoint
        # becomes the bottleneck, as a real one is.
        self._slots = threading.Semaphore(slots) if slots else None
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        if callable(script):
            self._responder: Responder = script
        else:
            queue = list(script)

            def next_reply(_request: dict[str, Any]) -> Reply:
                with self._lock:
                    if not queue:
                        return error(500, "the test script has no more replies")
                    return queue.pop(0)

            self._responder = next_reply
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.chat = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="chat-server", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ChatServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- called from handler threads ------------------------------------------------------------
    def answer(
        self, body: dict[str, Any], headers: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes, Reply]:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
        reply = self._responder(body)
        if self.latency or reply.delay:
            if self._slots is not None:
                with self._slots:
                    time.sleep(self.latency + reply.delay)
            else:
                time.sleep(self.latency + reply.delay)
        if reply.body is not None:
            raw = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            return reply.status, reply.headers, raw, reply
        if reply.status != 200:
            payload = {"error": reply.error or {"message": f"HTTP {reply.status}"}}
            if reply.echo_headers:
                payload["error"] = {
                    **payload["error"],
                    "message": f"{payload['error'].get('message')}: {headers}",
                }
            return reply.status, reply.headers, json.dumps(payload).encode(), reply
        return 200, reply.headers, json.dumps(self._completion(body, reply)).encode(), reply

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        ids = list(reply.call_ids) or [f"call_srv{next(self._ids)}" for _ in reply.tool_calls]
        calls = [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
            for call_id, (name, arguments) in zip(ids, reply.tool_calls, strict=False)
        ]
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if calls:
            message["tool_calls"] = calls
        finish = reply.finish_reason or ("tool_calls" if calls else "stop")
        prompt_tokens = len(json.dumps(body.get("messages", []))) // 4
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": 7,
                "total_tokens": prompt_tokens + 7,
            },
        }


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # the default backlog of 5 drops concurrent connects (1 s SYN retries)
    daemon_threads = True
    block_on_close = False
    chat: ChatServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the client reuses its connections
    disable_nagle_algorithm = True  # headers and body go out in separate writes: no 40 ms ACK stalls
    server: _Server

    def do_POST(self) -> None:  # noqa: N802 - the http.server naming
        length = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(length)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {}, json.dumps({"error": {"message": f"no route {self.path}"}}).encode())
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._send(400, {}, json.dumps({"error": {"message": "request body is not JSON"}}).encode())
            return
        status, headers, payload, reply = self.server.chat.answer(
            body, {k.lower(): v for k, v in self.headers.items()}
        )
        if reply.drop:
            self.close_connection = True
            self.connection.shutdown(2)
            return
        self._send(status, headers, payload, reply.drip)

    def _send(self, status: int, headers: dict[str, str], payload: bytes, drip: float = 0.0) -> None:
        try:
            self.send_response(status)
            headers = {"Content-Type": "application/json", **headers}
            self.send_header("Content-Length", str(len(payload)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            if drip:
                for i in range(len(payload)):
                    self.wfile.write(payload[i : i + 1])
                    self.wfile.flush()
                    time.sleep(drip)
            else:
                self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence per-request logs
        pass


@contextmanager
def serve(script: Sequence[Reply] | Responder, *, latency: float = 0.0) -> Iterator[ChatServer]:
    with ChatServer(script, latency=latency) as server:
        yield server


# ---- a deterministic model for benchmarks --------------------------------------------------------


def benchmark_model(request: dict[str, Any]) -> Reply:
    """Plays a three-reply episode in any mode: one tool call, a message to the user, then
    ``exit_conversation`` (or only the message when the agent is not offered that tool)."""
    turns = sum(1 for m in request.get("messages", ()) if m.get("role") == "assistant")
    tools = request.get("tools")
    if tools is not None:  # fc; call ids from the turn, so that two runs store equal episodes
        names = [t["function"]["name"] for t in tools]
        if turns == 0:
            return Reply(tool_calls=((names[0], "{}"),), call_ids=("call_0",))
        if turns == 1 or "exit_conversation" not in names:
            return say("I checked what I could; I cannot complete this request.")
        return Reply(tool_calls=(("exit_conversation", "{}"),), call_ids=(f"call_{turns}",))
    # text modes: the tool list is JSON inside the system prompt
    first = re.search(r'"name": "([^"]+)"', request["messages"][0]["content"])
    first = first.group(1) if first else "unknown_tool"
    if turns == 0:
        return say(f"Thought: check first.\nAction: {first}\nAction Input: {{}}\n<End Action>")
    if turns == 1:
        return say("Thought: I cannot complete this request.\nAction: N/A\nAction Input: N/A\n<End Action>")
    return say("Thought: done.\nAction: exit_conversation\nAction Input: {}\n<End Action>")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds added to every reply")
    parser.add_argument("--slots", type=int, default=None, help="replies made at once (default: no limit)")
    parser.add_argument("--bodies", help="a JSON file: a list of reply bodies, sent as they are")
    args = parser.parse_args(argv)
    responder: Responder = benchmark_model
    if args.bodies:
        with open(args.bodies, encoding="utf-8") as file:
            bodies = itertools.cycle(json.load(file))
        lock = threading.Lock()

        def responder(_request: dict[str, Any]) -> Reply:
            with lock:
                body = next(bodies)
            return Reply(body=body if not isinstance(body, str) else body.encode())

    with ChatServer(responder, latency=args.latency, slots=args.slots) as server:
        print(server.url, flush=True)
        sys.stdin.read()  # serve until the parent closes our stdin


if __name__ == "__main__":
    main()
