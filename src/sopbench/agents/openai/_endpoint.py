"""One OpenAI-compatible chat-completions endpoint: requests, retries and error classes.

The official async ``openai`` client does the HTTP and enforces the request timeout. Retrying is
done here, with the client's own retries switched off, because the runner has to know *why* a
reply is missing: a rate limit, a server error or a timeout is retried with bounded exponential
backoff and full jitter and, once the budget is spent, becomes ``AgentInfraError`` (the episode is
recorded as ``infra_error`` and retried on resume); a context-length error becomes
``ContextLengthExceeded`` (the agent's failure); anything else the endpoint refuses (a wrong key, an
unknown model) is ``AgentInfraError`` at once, since waiting would not help.

The API key lives only inside the ``openai`` client. Every message this module writes names the
endpoint by a URL stripped of user information and query, and has the key scrubbed out of any text
the server sent back (some servers echo the key they rejected).
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from sopbench.agents._protocol import AgentInfraError, ContextLengthExceeded, Usage

if TYPE_CHECKING:
    import openai

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
# Local servers (vLLM, Ollama, llama.cpp) accept any bearer token, and the client insists on one.
_NO_KEY = "no-key-set"
_RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
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

    def delay(self, retry: int, rng: random.Random, retry_after: float | None = None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_backoff)
        return rng.uniform(0.0, min(self.max_backoff, self.initial_backoff * 2.0**retry))


@dataclass(frozen=True, slots=True)
class ChatToolCall:
    """A tool call as the endpoint returned it; ``arguments`` is the raw text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ChatReply:
    content: str | None
    tool_calls: tuple[ChatToolCall, ...]
    usage: Usage
    finish_reason: str | None


def public_url(url: str) -> str:
    """``url`` without user information, query or fragment: safe to print."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


class ChatEndpoint:
    """``complete(messages, ...)`` against one endpoint and model, with the retry policy applied.

    Clients are shared by every endpoint with the same URL, key variable and timeout on the same
    event loop (one connection pool for all concurrent episodes) and closed shortly after the last
    user releases them.
    """

    def __init__(
        self,
        *,
        base_url: str | None,
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
        self.base_url = base_url
        self.model = model
        self.request_timeout = float(request_timeout)
        self.retry = retry
        self._rng = random.Random()
        self._client: openai.AsyncOpenAI | None = None
        self._pool_key: tuple[Any, ...] | None = None

    @property
    def where(self) -> str:
        return public_url(self.base_url) if self.base_url else "the OpenAI API"

    def __repr__(self) -> str:
        return f"ChatEndpoint(model={self.model!r}, url={self.where!r})"

    # ---- client lifetime ------------------------------------------------------------------------
    async def open(self) -> None:
        if self._client is None:
            self._pool_key = (self.base_url, self.api_key_env, self.request_timeout)
            self._client = _CLIENTS.acquire(self._pool_key, self._new_client)

    async def close(self) -> None:
        if self._client is not None and self._pool_key is not None:
            client, self._client = self._client, None
            await _CLIENTS.release(self._pool_key, client)

    def _new_client(self) -> openai.AsyncOpenAI:
        import openai  # imported on first use: it takes most of a second, and the CLI imports agents

        return openai.AsyncOpenAI(
            api_key=os.environ.get(self.api_key_env) or _NO_KEY,
            base_url=self.base_url,
            timeout=self.request_timeout,
            max_retries=0,  # retries are classified and bounded here (module docstring)
            http_client=_aiohttp_transport(openai),
        )

    def _secret(self) -> str | None:
        return os.environ.get(self.api_key_env) or None

    # ---- requests -------------------------------------------------------------------------------
    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        **params: Any,
    ) -> ChatReply:
        """One reply; raises ``AgentInfraError`` or ``ContextLengthExceeded`` (module docstring)."""
        await self.open()
        assert self._client is not None
        request: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        if tools:
            request["tools"] = list(tools)
        request.update({k: v for k, v in params.items() if v is not None})
        retries = 0
        while True:
            outcome = await self._attempt(request)
            if isinstance(outcome, ChatReply):
                return outcome
            failure, retry_after = outcome
            if isinstance(failure, _Retryable) and retries < self.retry.max_retries:
                await asyncio.sleep(self.retry.delay(retries, self._rng, retry_after))
                retries += 1
                continue
            if isinstance(failure, _Retryable):
                raise AgentInfraError(
                    f"{self.where} (model {self.model}): gave up after {retries + 1} attempts; "
                    f"last error: {failure.reason}"
                )
            raise failure

    async def _attempt(self, request: dict[str, Any]) -> ChatReply | tuple[Exception, float | None]:
        """The reply, or the failure (raised by the caller *outside* this ``except`` block, so that
        no exception carrying the request, and its Authorization header, is chained to it)."""
        import openai

        assert self._client is not None
        try:
            # The request is wire-format JSON already: posted as it is (the client's documented way
            # to send any body), because the typed transformation that ``chat.completions.create``
            # applies to messages and tool schemas costs milliseconds of CPU per request, which
            # caps concurrency on a small machine. Timeout, headers and errors are the client's.
            completion = await self._client.post(
                "/chat/completions", cast_to=openai.types.chat.ChatCompletion, body=request
            )
        except openai.APIStatusError as exc:
            return self._status_failure(exc), _retry_after(exc.response.headers)
        except openai.APITimeoutError as exc:
            refused = _connection_failure(exc)  # the aiohttp transport reports refusals as timeouts
            if refused is not None:
                return _Retryable(f"connection failed ({self._scrub(refused)})"), None
            return _Retryable(f"no reply within {self.request_timeout:g} s"), None
        except openai.APIConnectionError as exc:
            return _Retryable(f"connection failed ({self._scrub(str(exc))})"), None
        except openai.APIError as exc:  # a reply that is not a chat completion
            return _Retryable(f"unreadable reply ({self._scrub(str(exc))})"), None
        return self._reply(completion)

    def _reply(self, completion: Any) -> ChatReply | tuple[Exception, None]:
        choices = getattr(completion, "choices", None)
        if not choices:
            return _Retryable("the reply holds no choices"), None
        choice = choices[0]
        message = choice.message
        if message is None:
            return _Retryable("the reply's choice holds no message"), None
        calls = tuple(
            ChatToolCall(
                id=call.id or "",
                name=(call.function.name or "") if call.function else "",
                arguments=(call.function.arguments or "") if call.function else "",
            )
            for call in (message.tool_calls or ())
        )
        usage = completion.usage
        return ChatReply(
            content=message.content,
            tool_calls=calls,
            usage=Usage(
                (usage.prompt_tokens or 0) if usage else 0, (usage.completion_tokens or 0) if usage else 0
            ),
            finish_reason=choice.finish_reason,
        )

    def _status_failure(self, exc: openai.APIStatusError) -> Exception:
        status = exc.status_code
        detail = self._scrub(_error_text(exc))
        where = f"{self.where} (model {self.model})"
        if status in (400, 413, 422) and _CONTEXT_LENGTH.search(detail):
            return ContextLengthExceeded(f"{where}: the conversation exceeds the model's context: {detail}")
        if status == 429 and "insufficient_quota" in detail:
            return AgentInfraError(f"{where}: quota exhausted (HTTP 429): {detail}")
        if status in _RETRYABLE_STATUS or status >= 500:
            return _Retryable(f"HTTP {status}: {detail}")
        if status in (401, 403):
            return AgentInfraError(
                f"{where}: the endpoint rejected the API key (HTTP {status}); the key is read from "
                f"${self.api_key_env}: {detail}"
            )
        return AgentInfraError(f"{where}: the endpoint refused the request (HTTP {status}): {detail}")

    def _scrub(self, text: str) -> str:
        secret = self._secret()
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
        return text


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
    """The text of an ``OSError`` (other than a timeout) behind ``exc``, if there is one."""
    seen: BaseException | None = exc.__cause__ or exc.__context__
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(seen, OSError) and not isinstance(seen, TimeoutError):
            return str(seen)
        seen = seen.__cause__ or seen.__context__
    return None


class _Retryable(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


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
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is not None:
            try:
                return float(value) * scale
            except ValueError:
                return None
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
