"""One OpenAI-compatible chat-completions endpoint: requests, retries and error classes.

The official async ``openai`` client does the HTTP and enforces the request timeout. Retrying is
done here, with the client's own retries switched off, because the runner has to know *why* a
reply is missing: a rate limit, a server error or a timeout is retried with bounded exponential
backoff and full jitter and, once the budget is spent, becomes ``AgentInfraError`` (the episode is
recorded as ``infra_error`` and retried on resume); a context-length error becomes
``ContextLengthExceeded`` (the agent's failure); anything else the endpoint refuses (a wrong key, an
unknown model) is ``AgentInfraError`` at once, since waiting would not help.

An endpoint may be several replicas of one model (``base_url`` a list): each request goes to the
replica with the fewest requests outstanding (over every episode of the process), and a replica whose
connection fails or that answers with a server error is taken out for ``REPLICA_BACKOFF`` seconds;
the request goes at once to another replica, so that the run goes on with the others.

The API key lives only inside the ``openai`` client. Every message this module writes names the
endpoint by a URL stripped of user information and query, and has the key scrubbed out of any text
the server sent back (some servers echo the key they rejected).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
import re
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, quote_plus, urlsplit, urlunsplit

from sopbench.agents._protocol import AgentInfraError, AgentRequestError, ContextLengthExceeded, Usage

if TYPE_CHECKING:
    import openai

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
# Local servers (vLLM, Ollama, llama.cpp) accept any bearer token, and the client insists on one.
_NO_KEY = "no-key-set"
_RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
# A server error that names a validation failure is the request's fault: sending it again is useless.
_VALIDATION = re.compile(r"validation error|validationerror|failed to validate|invalid request|unprocessable", re.I)
TOOL_CHOICES = ("auto", "required", "none")
REPLICA_BACKOFF = 30.0  # seconds a failing replica is left out (the others take its requests)
_CONTEXT_LENGTH = re.compile(
    r"context[ _-]?length|context window|maximum context|context size|too many tokens|"
    r"prompt is too long|input is too long|reduce the length|maximum (?:input|prompt) length",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Bounded exponential backoff with full jitter: retry ``n`` waits ``uniform(0, min(cap, base*2**n))``.

    A ``Retry-After`` the server sends is honoured up to ``max_backoff``.
    """

    max_retries: int = 5
    initial_backoff: float = 1.0
    max_backoff: float = 60.0

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.initial_backoff < 0 or self.max_backoff < 0:
            raise ValueError("retry settings must not be negative")

    def delay(
        self, retry: int, rng: random.Random, retry_after: float | None = None, *, full: bool = False
    ) -> float:
        """The wait before retry ``retry``; ``full``: the whole backoff step, no jitter towards zero
        (after a timeout, when the server may still be busy with the abandoned request)."""
        step = min(self.max_backoff, self.initial_backoff * 2.0**retry)
        if retry_after is not None and math.isfinite(retry_after):
            return min(max(retry_after, 0.0), self.max_backoff)
        return step if full else rng.uniform(0.0, step)


@dataclass(frozen=True, slots=True)
class ChatToolCall:
    """A tool call as the endpoint returned it; ``arguments`` is the raw text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ChatReply:
    """A reply read defensively: ``problems`` names every field that had the wrong shape (it was
    turned into text) and ``raw`` is then the reply's message as the server sent it."""

    content: str | None
    tool_calls: tuple[ChatToolCall, ...]
    usage: Usage
    finish_reason: str | None
    problems: tuple[str, ...] = ()
    raw: str | None = None
    # per call (same order as ``tool_calls``): why the call itself is malformed, or None
    call_problems: tuple[str | None, ...] = field(default=())


_SECRET_QUERY = re.compile(r"key|token|secret|sig|pass|auth", re.IGNORECASE)


def redact_url(url: str) -> str:
    """``url`` without user information, and with the values of query parameters that look like
    credentials (``api-key``, ``token``, ...) replaced by ``***``: safe to store, still the same
    endpoint for everything else (path, other parameters)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    query = "&".join(
        f"{name}=***" if _SECRET_QUERY.search(name) and sep else pair
        for pair in parts.query.split("&")
        if pair
        for name, sep, _value in [pair.partition("=")]
    )
    return urlunsplit((parts.scheme, host, parts.path, query, parts.fragment))


def public_url(url: str) -> str:
    """``url`` without user information, query or fragment: safe to print."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


@dataclass(slots=True)
class ReplicaHealth:
    """One replica's load and state, shared by every endpoint of the process that names its URL."""

    outstanding: int = 0  # requests sent and not yet answered
    out_until: float = 0.0  # time.monotonic() before which it takes no requests (after a failure)


_REPLICAS: dict[str, ReplicaHealth] = {}


def replica_health(url: str) -> ReplicaHealth:
    return _REPLICAS.setdefault(url, ReplicaHealth())


def pick_replica(urls: Sequence[str], now: float) -> str:
    """The replica with the fewest outstanding requests among those in service (list order breaks
    ties); when every replica is out, the one back soonest."""
    healthy = [u for u in urls if replica_health(u).out_until <= now]
    if not healthy:
        return min(urls, key=lambda u: replica_health(u).out_until)
    return min(healthy, key=lambda u: replica_health(u).outstanding)


class ChatEndpoint:
    """``complete(messages, ...)`` against one endpoint (or replicas of it) and model, with the retry
    policy applied.

    Clients are shared by every endpoint with the same URL, key variable and timeout on the same
    event loop (one connection pool for all concurrent episodes) and closed shortly after the last
    user releases them.
    """

    def __init__(
        self,
        *,
        base_url: str | Sequence[str] | None,
        model: str,
        api_key_env: str | None = None,
        request_timeout: float = 300.0,
        retry: RetryPolicy = RetryPolicy(),
    ) -> None:
        if not model:
            raise ValueError("a model name is required (--model)")
        if request_timeout <= 0:
            raise ValueError("the request timeout must be positive")
        explicit_env = api_key_env is not None
        self.api_key_env = api_key_env or DEFAULT_API_KEY_ENV
        if explicit_env and not os.environ.get(self.api_key_env):
            raise ValueError(f"the API key variable {self.api_key_env} named by --api-key-env is not set")
        if base_url is not None and not isinstance(base_url, str):
            self.replicas: tuple[str | None, ...] = tuple(str(u) for u in base_url)
            if not self.replicas:
                raise ValueError("an endpoint needs at least one base URL")
        else:
            self.replicas = (base_url,)
        self._current = self.replicas[0]  # the replica of the current request (messages name it)
        self.model = model
        self.request_timeout = float(request_timeout)
        self.retry = retry
        self._rng = random.Random()
        self.requests = 0  # attempts sent, retries included
        self.timed_out_requests = 0  # attempts abandoned at the request timeout (then retried)
        self.waiting_on: dict[str, Any] | None = None  # the attempt in flight (episode timeouts)
        self._clients: dict[str | None, openai.AsyncOpenAI] = {}

    @property
    def base_url(self) -> str | None:
        """The URL of the replica the current (or last) request went to."""
        return self._current

    @base_url.setter
    def base_url(self, url: str | None) -> None:  # one endpoint from now on (before its first request)
        self.replicas = (url,)
        self._current = url

    @property
    def where(self) -> str:
        return public_url(self.base_url) if self.base_url else "the OpenAI API"

    def __repr__(self) -> str:
        return f"ChatEndpoint(model={self.model!r}, url={self.where!r})"

    # ---- client lifetime ------------------------------------------------------------------------
    def _pool_key(self, url: str | None) -> tuple[Any, ...]:
        return (url, self.api_key_env, self.request_timeout)

    async def open(self) -> None:
        for url in self.replicas:
            if url not in self._clients:
                self._clients[url] = _CLIENTS.acquire(self._pool_key(url), lambda u=url: self._new_client(u))

    async def close(self) -> None:
        clients, self._clients = self._clients, {}
        for url, client in clients.items():
            await _CLIENTS.release(self._pool_key(url), client)

    def _new_client(self, url: str | None) -> openai.AsyncOpenAI:
        import openai  # imported on first use: it takes most of a second, and the CLI imports agents

        return openai.AsyncOpenAI(
            # a key pasted with a trailing newline or space is the same key (the header refuses it)
            api_key=(os.environ.get(self.api_key_env) or "").strip() or _NO_KEY,
            base_url=url,
            timeout=self.request_timeout,
            max_retries=0,  # retries are classified and bounded here (module docstring)
            http_client=_aiohttp_transport(openai),
        )

    # ---- requests -------------------------------------------------------------------------------
    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        **params: Any,
    ) -> ChatReply:
        """One reply; raises ``AgentInfraError``, ``AgentRequestError`` or ``ContextLengthExceeded``
        (module docstring). A malformed reply is returned with its problems named, never raised."""
        await self.open()
        request: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        if tools:
            request["tools"] = list(tools)
        request.update({k: v for k, v in params.items() if v is not None})
        retries = 0
        failovers = 0  # a failed replica's request sent at once to another one, not a retry
        while True:
            self.requests += 1
            url = self._current = self._choose()
            self.waiting_on = {
                "url": self.where,
                "model": self.model,
                "messages": len(request["messages"]),
                "attempt": retries + 1,
                "sent": time.monotonic(),
            }
            health = replica_health(url) if url is not None else None
            if health is not None:
                health.outstanding += 1
            try:
                outcome = await self._attempt(request)
            finally:
                if health is not None:
                    health.outstanding -= 1
            self.waiting_on = None
            if isinstance(outcome, ChatReply):
                return outcome
            failure, retry_after = outcome
            if health is not None and len(self.replicas) > 1 and _replica_fault(failure):
                health.out_until = time.monotonic() + REPLICA_BACKOFF
                if failovers < len(self.replicas) and self._choose() != url:
                    failovers += 1
                    continue
            timed_out = isinstance(failure, _TimedOut)
            if timed_out:
                # The server may still be generating the abandoned reply: the retry is counted (the
                # run summary shows it) and waits a whole backoff step, never a jittered near-zero.
                self.timed_out_requests += 1
            if isinstance(failure, _Retryable) and retries < self.retry.max_retries:
                await asyncio.sleep(self.retry.delay(retries, self._rng, retry_after, full=timed_out))
                retries += 1
                continue
            if isinstance(failure, _Retryable):
                raise AgentInfraError(
                    f"{self.where} (model {self.model}): gave up after {retries + 1} attempts; "
                    f"last error: {failure.reason}"
                )
            raise failure

    def _choose(self) -> str | None:
        if len(self.replicas) == 1:
            return self.replicas[0]
        return pick_replica([u for u in self.replicas if u is not None], time.monotonic())

    async def _attempt(self, request: dict[str, Any]) -> ChatReply | tuple[Exception, float | None]:
        """The reply, or the failure (raised by the caller *outside* this ``except`` block, so that
        no exception carrying the request, and its Authorization header, is chained to it)."""
        import openai

        client = self._clients[self.base_url]
        try:
            # The request is wire-format JSON already: posted as it is (the client's documented way
            # to send any body), because the typed transformation that ``chat.completions.create``
            # applies to messages and tool schemas costs milliseconds of CPU per request, which
            # caps concurrency on a small machine. The reply is taken as text and read here: the
            # client's typed models accept any JSON shape unchecked, and a reply is the model's
            # output, to be judged, never trusted. ``wait_for`` bounds the whole request, body
            # included: the client's own timeout is per read, so a slow drip would never end.
            text = await asyncio.wait_for(
                client.post("/chat/completions", cast_to=str, body=request), self.request_timeout
            )
        except TimeoutError:
            return _TimedOut(f"no complete reply within {self.request_timeout:g} s"), None
        except openai.APIStatusError as exc:
            return self._status_failure(exc), _retry_after(exc.response.headers)
        except openai.APITimeoutError as exc:
            dropped = _connection_failure(exc)  # the aiohttp transport reports refusals as timeouts
            if dropped is not None:
                return _Retryable(f"connection failed ({self._scrub(dropped)})"), None
            return _TimedOut(f"no reply within {self.request_timeout:g} s"), None
        except openai.APIConnectionError as exc:
            cause = _connection_failure(exc)
            detail = f"{exc}: {cause}" if cause and cause not in str(exc) else str(exc)
            return _Retryable(f"connection failed ({self._scrub(detail)})"), None
        except openai.APIError as exc:  # a reply the client could not read at all
            return _Retryable(f"unreadable reply ({self._scrub(str(exc))})"), None
        return read_completion(text if isinstance(text, str) else str(text), self._scrub)

    def _status_failure(self, exc: openai.APIStatusError) -> Exception:
        status = exc.status_code
        detail = self._scrub(_error_text(exc))
        where = f"{self.where} (model {self.model})"
        if status in (400, 413, 422) and _CONTEXT_LENGTH.search(detail):
            return ContextLengthExceeded(f"{where}: the conversation exceeds the model's context: {detail}")
        if status == 429 and "insufficient_quota" in detail:
            return AgentRequestError(f"{where}: quota exhausted (HTTP 429): {detail}")
        if status >= 500 and _VALIDATION.search(detail):
            return AgentRequestError(
                f"{where}: the server rejected the request as invalid (HTTP {status}, not retried): {detail}"
            )
        if status in _RETRYABLE_STATUS or status >= 500:
            return _Retryable(f"HTTP {status}: {detail}")
        if status in (401, 403):
            return AgentRequestError(
                f"{where}: the endpoint rejected the API key (HTTP {status}); the key is read from "
                f"${self.api_key_env}: {detail}"
            )
        if status == 404 and self.base_url and not urlsplit(self.base_url).path.rstrip("/").endswith("/v1"):
            return AgentRequestError(
                f"{where}: HTTP 404 at {self.where}/chat/completions; OpenAI-compatible servers "
                f"usually serve it under /v1: try --base-url {self.where.rstrip('/')}/v1 ({detail})"
            )
        return AgentRequestError(f"{where}: the endpoint refused the request (HTTP {status}): {detail}")

    def _scrub(self, text: str) -> str:
        return scrub_secret(text, os.environ.get(self.api_key_env))


def scrub_secret(text: str, secret: str | None) -> str:
    """``text`` with ``secret`` replaced by ``***`` in every form a server or URL may show it:
    as set, stripped of surrounding white space, and percent-encoded."""
    if not secret:
        return text
    forms = {secret, secret.strip(), quote(secret, safe=""), quote(secret.strip(), safe="")}
    forms |= {quote_plus(form) for form in list(forms)}
    for form in sorted((f for f in forms if len(f) >= 4), key=len, reverse=True):
        text = text.replace(form, "***")
    return text


def read_completion(text: str, scrub: Any = lambda t: t) -> ChatReply | tuple[Exception, None]:
    """A chat-completion body read field by field. A body that is not a JSON completion with a
    choice is the server's failure (retried); anything wrong inside the message (numbers, lists,
    objects or nulls where text belongs, integer ids, missing fields, content parts) is the model's
    mistake: it is turned into text, named in ``problems`` and the message's raw JSON is kept."""
    try:
        data = json.loads(text)
    except ValueError:
        return _Retryable(f"unreadable reply (not JSON): {scrub(_clip(text))!r}"), None
    if not isinstance(data, Mapping):
        return _Retryable(f"unreadable reply (not a JSON object): {scrub(_clip(text))!r}"), None
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        error = data.get("error")
        if error:
            return _Retryable(f"the reply is an error: {scrub(_clip(json.dumps(error)))}"), None
        return _Retryable("the reply holds no choices"), None
    choice = choices[0] if isinstance(choices[0], Mapping) else {}
    message = choice.get("message")
    problems: list[str] = []
    if not isinstance(message, Mapping):
        problems.append(f"the reply's message is {_kind(message)}, not an object")
        message = {}
    content = _as_text(message.get("content"), "content", problems)
    calls: list[ChatToolCall] = []
    call_problems: list[str | None] = []
    raw_calls = message.get("tool_calls")
    if raw_calls is not None and not isinstance(raw_calls, list):
        problems.append(f"tool_calls is {_kind(raw_calls)}, not a list")
        raw_calls = []
    for i, raw_call in enumerate(raw_calls or ()):
        where = f"tool_calls[{i}]"
        if not isinstance(raw_call, Mapping):
            problems.append(f"{where} is {_kind(raw_call)}, not an object")
            calls.append(ChatToolCall("", "", json.dumps(raw_call, ensure_ascii=False)))
            call_problems.append(f"the call is {_kind(raw_call)}, not an object")
            continue
        call_id = raw_call.get("id")
        if call_id is not None and not isinstance(call_id, str):
            problems.append(f"{where}.id is {_kind(call_id)}, not a string")
        function = raw_call.get("function")
        if not isinstance(function, Mapping):
            problems.append(f"{where}.function is {_kind(function)}, not an object")
            function = {}
        name = function.get("name")
        if not isinstance(name, str) or not name.strip():
            problems.append(f"{where}.function.name is {_kind(name)}, not a tool name")
        arguments = function.get("arguments")
        call_problem = None  # counted once, as a malformed call (not also as a reply problem)
        if not isinstance(arguments, str):
            call_problem = f"arguments sent as {_kind(arguments)}, not as a JSON string"
        calls.append(
            ChatToolCall(
                "" if call_id is None else str(call_id) if not isinstance(call_id, str) else call_id,
                name if isinstance(name, str) else ("" if name is None else json.dumps(name)),
                arguments
                if isinstance(arguments, str)
                else ("" if arguments is None else json.dumps(arguments, ensure_ascii=False)),
            )
        )
        call_problems.append(call_problem)
    finish = choice.get("finish_reason")
    raw = None
    if problems or any(call_problems):
        raw = json.dumps(choice.get("message"), ensure_ascii=False, default=str)
    return ChatReply(
        content=content,
        tool_calls=tuple(calls),
        usage=_usage(data.get("usage")),
        finish_reason=finish if isinstance(finish, str) else None,
        problems=tuple(f"malformed reply: {p}" for p in problems),
        raw=raw,
        call_problems=tuple(call_problems),
    )


def _as_text(value: Any, where: str, problems: list[str]) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts: their text, in order
        texts = [
            part["text"]
            for part in value
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        ]
        problems.append(f"{where} is a list of {len(value)} parts, not a string")
        return "\n".join(texts) if texts else None
    problems.append(f"{where} is {_kind(value)}, not a string")
    return json.dumps(value, ensure_ascii=False, default=str)


def _usage(usage: Any) -> Usage:
    if not isinstance(usage, Mapping):
        return Usage()

    def count(key: str) -> int:
        value = usage.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

    return Usage(count("prompt_tokens"), count("completion_tokens"))


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a JSON number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a JSON list"
    if isinstance(value, Mapping):
        return "a JSON object"
    return type(value).__name__


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


class ModelSide:
    """What the ``openai`` agent and the ``llm`` user share: one model behind one endpoint, with its
    sampling settings. Each keeps its own explicit constructor (the runner checks options against
    it) and hands its arguments over with ``self._use_model(locals())``."""

    model: str
    temperature: float | None
    max_tokens: int | None
    endpoint: ChatEndpoint

    def _use_model(self, settings: Mapping[str, Any]) -> None:
        max_tokens = settings["max_tokens"]
        if max_tokens is not None and max_tokens <= 0:
            raise ValueError("max_tokens must be positive")
        self.model = settings["model"]
        self.temperature = settings["temperature"]
        self.max_tokens = max_tokens
        self.endpoint = ChatEndpoint(
            base_url=settings["base_url"],
            model=settings["model"],
            api_key_env=settings["api_key_env"],
            request_timeout=settings["request_timeout"],
            retry=RetryPolicy(
                settings["max_retries"], settings["retry_initial_backoff"], settings["retry_max_backoff"]
            ),
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, url={self.endpoint.where!r})"

    async def close(self) -> None:
        await self.endpoint.close()


def _aiohttp_transport(openai: Any) -> Any:
    """The client's aiohttp transport (the ``openai[aiohttp]`` extra, which the client documents for
    concurrency): with 64 episodes at once on a small machine the event loop's CPU is the limit, and
    a whole run needs about a fifth less CPU with it. ``None`` (the default transport) without it."""
    factory = getattr(openai, "DefaultAioHttpClient", None)
    if factory is None:
        return None
    try:
        return factory()
    except RuntimeError:  # the extra is missing
        return None


def _connection_failure(exc: BaseException) -> str | None:
    """What broke the connection behind ``exc`` (a refusal, a reset, a server that closed it
    mid-reply), or None when the cause is a timeout."""
    seen: BaseException | None = exc.__cause__ or exc.__context__
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(seen, TimeoutError | asyncio.TimeoutError) or "timeout" in type(seen).__name__.lower():
            seen = seen.__cause__ or seen.__context__
            continue
        if isinstance(seen, OSError) or type(seen).__module__.split(".")[0] in ("aiohttp", "httpx", "httpcore", "h11"):
            return f"{type(seen).__name__}: {seen}" if str(seen) else type(seen).__name__
        seen = seen.__cause__ or seen.__context__
    return None


def _replica_fault(failure: Exception) -> bool:
    """A failure of the replica rather than of the request: no connection, a server error, no reply."""
    return isinstance(failure, _Retryable) and not failure.reason.startswith("HTTP 429")


class _Retryable(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _TimedOut(_Retryable):
    """No complete reply within the request timeout: retried, and counted."""


def _error_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping):
            parts = [str(error[key]) for key in ("message", "code", "type") if error.get(key)]
            if parts:
                return "; ".join(dict.fromkeys(parts))
        elif isinstance(error, str):
            return error
    return exc.message or f"HTTP {exc.status_code}"


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks us to wait, or None when it says nothing usable. Seconds (or
    ``retry-after-ms``) and HTTP dates are read; nan, infinities and negatives are ignored; the
    caller caps the rest at the policy's ``max_backoff``."""
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is None:
            continue
        value = value.strip()
        try:
            seconds = float(value) * scale
        except ValueError:
            try:
                when = parsedate_to_datetime(value)
            except (TypeError, ValueError, IndexError, OverflowError):
                return None
            if when is None:
                return None
            if when.tzinfo is None:
                return None
            seconds = when.timestamp() - time.time()
        if not math.isfinite(seconds) or seconds < 0:
            return None
        return seconds
    return None


@dataclass
class _Shared:
    client: openai.AsyncOpenAI
    users: int = 0
    closer: asyncio.Task | None = None


class _ClientPool:
    """Shared clients per event loop (an ``httpx`` pool belongs to the loop that opened it).

    A client nobody uses any more is closed after ``linger`` seconds, so that episodes run one
    after another keep their connections (and skip the tens of milliseconds a new client costs);
    when the loop ends first (``asyncio.run`` cancels pending tasks), the cancelled closer closes it.
    """

    linger = 2.0

    def __init__(self) -> None:
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple, _Shared]] = (
            weakref.WeakKeyDictionary()
        )

    def acquire(self, key: tuple, make: Any) -> openai.AsyncOpenAI:
        shared = self._loops.setdefault(asyncio.get_running_loop(), {})
        entry = shared.get(key)
        if entry is None:
            entry = shared[key] = _Shared(make())
        if entry.closer is not None:
            entry.closer.cancel()
            entry.closer = None
        entry.users += 1
        return entry.client

    async def release(self, key: tuple, client: openai.AsyncOpenAI) -> None:
        shared = self._loops.get(asyncio.get_running_loop(), {})
        entry = shared.get(key)
        if entry is None or entry.client is not client:
            await client.close()
            return
        entry.users -= 1
        if entry.users == 0:
            entry.closer = asyncio.create_task(self._close_idle(shared, key, entry))

    async def _close_idle(self, shared: dict[tuple, _Shared], key: tuple, entry: _Shared) -> None:
        try:
            await asyncio.sleep(self.linger)
        except asyncio.CancelledError:
            if entry.users:  # taken again: keep it open
                return
        if shared.get(key) is entry and entry.users == 0:
            del shared[key]
            await entry.client.close()


_CLIENTS = _ClientPool()
