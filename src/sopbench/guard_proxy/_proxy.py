"""The guard in front of any MCP server: a stdio proxy that judges each ``tools/call`` before the
server sees it.

The proxy speaks JSON-RPC on its standard input and output to one client and starts the upstream
server as a subprocess (the MCP SDK's stdio client transport). Every message passes through as it
is, both ways (initialize, tools/list, resources, prompts, notifications, the server's own requests
to the client), except ``tools/call``: the guard (one ``GuardSession`` for the connection) checks
each call against the calls run before it; an allowed call goes to the upstream server and its
answer back to the client, and is recorded with that answer (a helper that answered ``true``
verifies later calls); a refused call never reaches the server: the client gets a tool result with
``isError: true`` whose text is the guard's explanation. Calls are judged and run one at a time, in
the order the client sent them, so each is judged after the calls before it have been answered (a
client may still send many at once: nothing is lost). Each call is one line of the decision log.

If the upstream server exits, every request still waiting for it is answered with a JSON-RPC error,
later calls are logged as not run, and the proxy ends (``ProxyReport.upstream_exited``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

import anyio
from mcp import types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.message import SessionMessage

from sopbench._json import JsonBoundError, check_value
from sopbench.guard import Guard, ToolCall

from ._log import CANCELLED, OK, PROTOCOL_ERROR, TOOL_ERROR, UPSTREAM_EXITED, DecisionLog

UPSTREAM_GONE = -32000  # a JSON-RPC server error: the upstream server exited before it answered
MAX_LINE_BYTES = 32 << 20  # one message from the client (the bound on a reply body)


class UpstreamFailed(Exception):
    """The upstream command could not be started (one line: the command and why)."""


@dataclass(frozen=True)
class ProxyReport:
    """How a proxy session ended: the counts of its decision log, and why the upstream server ended
    when it ended first (None when the client closed the connection)."""

    counts: dict[str, int]
    problems: tuple[str, ...]
    upstream_exited: str | None


def run_proxy(
    guard: Guard,
    command: Sequence[str],
    log: IO[bytes],
    *,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
    env: Mapping[str, str] | None = None,
) -> ProxyReport:
    """Serve one MCP client on ``stdin``/``stdout`` (default: this process's, with any other output
    sent to stderr meanwhile) through ``guard`` to the server ``command`` starts, until the client
    closes its side or the server exits. ``log``: the decision log (one JSON line per call).
    ``env``: the server's environment (default: this process's). ``UpstreamFailed`` when the command
    cannot be started."""
    if not command:
        raise UpstreamFailed("no upstream command (give it after --)")
    if stdin is None or stdout is None:
        with _wire() as (wire_in, wire_out):
            return anyio.run(_serve, guard, list(command), log, stdin or wire_in, stdout or wire_out, env)
    return anyio.run(_serve, guard, list(command), log, stdin, stdout, env)


class _wire:
    """This process's stdin and stdout as the wire, on private descriptors; meanwhile descriptor 1
    points at stderr, so that nothing else printed can break a message."""

    def __enter__(self) -> tuple[IO[bytes], IO[bytes]]:
        sys.stdout.flush()
        self.saved = os.dup(1)
        wire_in = os.fdopen(os.dup(0), "rb")
        wire_out = os.fdopen(os.dup(1), "wb")
        os.dup2(2, 1)
        self.files = (wire_in, wire_out)
        return self.files

    def __exit__(self, *exc: object) -> None:
        sys.stdout.flush()
        os.dup2(self.saved, 1)
        os.close(self.saved)
        self.files[1].close()  # the reading thread may still hold the input: it ends with the process


async def _serve(
    guard: Guard,
    command: list[str],
    log: IO[bytes],
    stdin: IO[bytes],
    stdout: IO[bytes],
    env: Mapping[str, str] | None,
) -> ProxyReport:
    decisions = DecisionLog(log)
    params = StdioServerParameters(
        command=command[0], args=command[1:], env=dict(os.environ if env is None else env)
    )
    proxy = _Proxy(guard, decisions, stdout, shlex.join(command))
    decisions.event("start", upstream=command)
    started = False
    try:
        async with stdio_client(params) as (up_read, up_write):
            started = True
            await proxy.run(up_read, up_write, stdin)
    except OSError as exc:
        if started:
            raise
        why = f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
        decisions.event("end", **decisions.counts.as_dict(), upstream="did not start")
        raise UpstreamFailed(
            f"the upstream command {shlex.join(command)} could not be started ({why})"
        ) from None
    counts = decisions.counts
    decisions.event("end", **counts.as_dict(), upstream_exited=proxy.gone)
    return ProxyReport(counts.as_dict(), tuple(counts.problems), proxy.gone)


def _key(request_id: Any) -> tuple[str, Any]:
    return type(request_id).__name__, request_id  # 1 and "1" are two requests


class _Proxy:
    def __init__(self, guard: Guard, log: DecisionLog, out: IO[bytes], upstream: str) -> None:
        self.session = guard.session()
        self.log = log
        self.out = out
        self.upstream = upstream
        self.calls: asyncio.Queue[types.JSONRPCRequest] = asyncio.Queue()
        self.pending: dict[tuple[str, Any], asyncio.Future[Any]] = {}  # the call running upstream
        self.forwarded: dict[tuple[str, Any], str] = {}  # other requests waiting for the upstream
        self.cancelled: set[tuple[str, Any]] = set()
        self.gone: str | None = None  # why the upstream server ended, once it has

    async def run(self, up_read: Any, up_write: Any, stdin: IO[bytes]) -> None:
        lines: asyncio.Queue[bytes | int | None] = asyncio.Queue()
        _read_lines(stdin, asyncio.get_running_loop(), lines)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._from_upstream, up_read, tasks.cancel_scope)
            tasks.start_soon(self._run_calls, up_write)
            await self._from_client(lines, up_write)
            await self.calls.join()  # the client is done: the calls it sent still run
            tasks.cancel_scope.cancel()

    # -- client -> upstream ---------------------------------------------------------------------------
    async def _from_client(self, lines: asyncio.Queue[bytes | int | None], up_write: Any) -> None:
        while (line := await lines.get()) is not None:
            if isinstance(line, int):
                self.log.problem(f"the client sent a line of {line} bytes (at most {MAX_LINE_BYTES})")
                self._send(_error(None, types.INVALID_REQUEST, "message too large"))
                continue
            if not line.strip():
                continue
            try:
                message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            except ValueError as exc:
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                self.log.problem(f"the client sent a line that is not a JSON-RPC message ({first})")
                self._send(_error(None, types.PARSE_ERROR, "not a JSON-RPC message"))
                continue
            if isinstance(message, types.JSONRPCRequest) and message.method == "tools/call":
                self.calls.put_nowait(message)
                continue
            if isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
                self._cancel((message.params or {}).get("requestId"))
            if self.gone is not None:
                if isinstance(message, types.JSONRPCRequest):
                    self._send(_error(message.id, UPSTREAM_GONE, f"the upstream server exited ({self.gone})"))
                continue
            if isinstance(message, types.JSONRPCRequest):
                self.forwarded[_key(message.id)] = message.method
            await self._to_upstream(up_write, message)

    def _cancel(self, request_id: Any) -> None:
        if request_id is None:
            return
        key = _key(request_id)
        self.cancelled.add(key)  # a call still queued is not run
        future = self.pending.get(key)
        if future is not None and not future.done():
            future.set_result(CANCELLED)  # no answer will come (the upstream stops or ignores it)

    async def _to_upstream(self, up_write: Any, message: Any) -> None:
        # The upstream may be gone: _from_upstream answers what waits for it.
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await up_write.send(SessionMessage(message))

    # -- the calls, one at a time ---------------------------------------------------------------------
    async def _run_calls(self, up_write: Any) -> None:
        while True:
            request = await self.calls.get()
            try:
                await self._call(request, up_write)
            finally:
                self.calls.task_done()

    async def _call(self, request: types.JSONRPCRequest, up_write: Any) -> None:
        params = request.params or {}
        name: Any = params.get("name")
        arguments: Any = params.get("arguments")
        arguments = {} if arguments is None else arguments
        key = _key(request.id)
        why = _invalid(name, arguments)
        if why is not None:
            self.log.call(name, arguments, None, outcome=None, why=why)
            self._send(_error(request.id, types.INVALID_PARAMS, why))
            return
        if key in self.cancelled:
            self.cancelled.discard(key)
            self.log.call(name, arguments, None, outcome=CANCELLED)
            return
        started = time.perf_counter()
        decision = self.session.check(ToolCall(name, arguments))
        guard_ms = (time.perf_counter() - started) * 1e3
        if not decision.allowed:
            self._send(_refusal(request.id, decision.explanation))  # the client first, then the log
            self.log.call(name, arguments, decision, outcome=None, guard_ms=guard_ms)
            return
        if self.gone is not None:
            self.log.call(name, arguments, None, outcome=UPSTREAM_EXITED)
            self._send(_error(request.id, UPSTREAM_GONE, f"the upstream server exited ({self.gone})"))
            return
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[key] = future
        sent = time.perf_counter()
        await self._to_upstream(up_write, request)
        try:
            answer = await future
        finally:
            self.pending.pop(key, None)
            self.cancelled.discard(key)
        upstream_ms = (time.perf_counter() - sent) * 1e3
        output, succeeded, outcome = _observed(answer)
        self.session.record(ToolCall(name, arguments, output, succeeded))
        self.log.call(name, arguments, decision, outcome=outcome, guard_ms=guard_ms, upstream_ms=upstream_ms)
        if answer is None:  # the upstream exited before it answered
            self._send(_error(request.id, UPSTREAM_GONE, f"the upstream server exited ({self.gone})"))

    # -- upstream -> client ---------------------------------------------------------------------------
    async def _from_upstream(self, up_read: Any, scope: anyio.CancelScope) -> None:
        async for item in up_read:
            if isinstance(item, Exception):
                first = str(item).splitlines()[0] if str(item) else type(item).__name__
                self.log.problem(f"the upstream server sent a line that is not a JSON-RPC message ({first})")
                continue
            message = item.message
            if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
                key = _key(message.id)
                self.forwarded.pop(key, None)
                future = self.pending.get(key)
                if future is not None:
                    if future.done():
                        continue  # cancelled by the client: it expects no answer
                    future.set_result(message)
            self._send(message)
        # The upstream closed its output: it exited (or will). Answer what waits for it, then stop.
        self.gone = f"{self.upstream} closed its output"
        for future in self.pending.values():
            if not future.done():
                future.set_result(None)
        for key, _method in list(self.forwarded.items()):
            self._send(_error(key[1], UPSTREAM_GONE, f"the upstream server exited ({self.gone})"))
        self.forwarded.clear()
        await self.calls.join()
        scope.cancel()

    def _send(self, message: Any) -> None:
        try:
            self.out.write(message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n")
            self.out.flush()
        except (BrokenPipeError, ValueError):
            pass  # the client went away; its calls are still logged


def _read_lines(
    source: IO[bytes], loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[bytes | int | None]
) -> None:
    """Each line of ``source`` into ``lines`` (the length alone of a line too long to be a message;
    None at the end), from a daemon thread: a blocked read never keeps the process from ending."""

    def put(line: bytes | int | None) -> None:
        with contextlib.suppress(RuntimeError):  # the proxy has ended
            loop.call_soon_threadsafe(lines.put_nowait, line)

    def read() -> None:
        try:
            while line := source.readline(MAX_LINE_BYTES + 1):
                if len(line) > MAX_LINE_BYTES:
                    size = len(line)
                    while not line.endswith(b"\n") and (line := source.readline(MAX_LINE_BYTES)):
                        size += len(line)
                    put(size)
                else:
                    put(line)
        except (OSError, ValueError):
            pass
        finally:
            put(None)

    threading.Thread(target=read, name="sopbench-guard-proxy-stdin", daemon=True).start()


def _invalid(name: Any, arguments: Any) -> str | None:
    """Why a tools/call cannot be judged (no tool name, arguments that are not an object), or None."""
    if not isinstance(name, str) or not name:
        return "tools/call needs the tool's name (params.name, a string)"
    if not isinstance(arguments, dict):
        return f"the arguments of {name} must be an object"
    try:
        check_value(arguments)
    except JsonBoundError as exc:
        return f"the arguments of {name} are not usable: JSON {exc}"
    return None


def _observed(answer: Any) -> tuple[Any, bool, str]:
    """What the guard records of the upstream's answer to a call: its output, whether it succeeded,
    and the log's outcome. The output is the structured result (``{"result": x}`` read as ``x``) or
    else the text of the content (``true``/``false`` read as booleans), so that a helper's yes/no
    answer settles its constraint; a tool error, a JSON-RPC error or no answer verifies nothing."""
    if answer is None:
        return None, False, UPSTREAM_EXITED
    if answer == CANCELLED:
        return None, False, CANCELLED
    if isinstance(answer, types.JSONRPCError):
        return None, False, PROTOCOL_ERROR
    result = answer.result
    failed = bool(result.get("isError"))
    structured = result.get("structuredContent")
    if structured is not None:
        if isinstance(structured, dict) and list(structured) == ["result"]:
            structured = structured["result"]
        if isinstance(structured, list) and len(structured) == 2 and isinstance(structured[0], bool):
            structured = tuple(structured)  # a (success, value) pair
        return structured, not failed, TOOL_ERROR if failed else OK
    content = result.get("content")
    texts: list[str] = [
        block["text"]
        for block in (content if isinstance(content, list) else [])
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    ]
    text: Any = "\n".join(texts)
    if text.strip() in ("true", "false"):
        text = text.strip() == "true"
    return text, not failed, TOOL_ERROR if failed else OK


def _refusal(request_id: Any, explanation: str) -> types.JSONRPCResponse:
    """A refused call's answer: a tool error (the agent reads it and can verify, then try again)."""
    result = {"content": [{"type": "text", "text": explanation}], "isError": True}
    return types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)


def _error(request_id: Any, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))
