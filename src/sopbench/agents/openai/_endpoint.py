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
the request goes at once to another replica, so that the run goes on with the others
(``_replicas.py``).

``slots`` caps the requests in flight at once per replica URL over every endpoint of the process (the
first endpoint to name a URL sets its cap): a request waits here for a free slot, before its timeout
starts, so that a server that answers one request at a time (llama.cpp's Python server) is not sent
requests that would time out in its own queue. The endpoint adds up, per episode, the time its
requests waited for a slot (``queue_s``) apart from the time the server took to answer them
(``model_s``, the server's own queue included when there is no cap).

The API key lives only inside the ``openai`` client. Every message this module writes names the
endpoint by a URL stripped of user information and query. Every text the server sent back, error
or reply (content, tool calls, raw message), has the key, and any credential in the base URL's
query, scrubbed out in every form before anything keeps it (``sopbench.secrets``): a server may
echo what it was sent.
"""

from __future__ import annotations

import asyncio
import functools
import os
import random
import re
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, get_args
from urllib.parse import urlsplit

from sopbench.agents._protocol import AgentInfraError, AgentRequestError, ContextLengthExceeded, Usage
from sopbench.secrets import Scrubber, public_url, url_credentials

from ._recorded import SideCache
from ._replicas import REPLICA_BACKOFF, pick_replica, replica_fault, replica_health, replica_slots
from ._replies import ChatReply, clip, read_completion
from ._retry import DEFAULT_RETRY, RetryPolicy
from ._transport import (
    CLIENTS,
    Retryable,
    TimedOut,
    aiohttp_transport,
    connection_failure,
    error_text,
    is_transport_error,
    retry_after,
)

if TYPE_CHECKING:
    import openai

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
# Local servers (vLLM, Ollama, llama.cpp) accept any bearer token, and the client insists on one.
_NO_KEY = "no-key-set"
_RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
# A server error that names a validation failure is the request's fault: sending it again is useless.
_VALIDATION = re.compile(
    r"validation error|validationerror|failed to validate|invalid request|unprocessable", re.I
)
ToolChoice = Literal["auto", "required", "none"]
TOOL_CHOICES: tuple[str, ...] = get_args(ToolChoice)
_CONTEXT_LENGTH = re.compile(
    r"context[ _-]?length|context window|maximum context|context size|too many tokens|"
    r"prompt is too long|input is too long|reduce the length|maximum (?:input|prompt) length",
    re.IGNORECASE,
)


def _refuse_credentials(url: str | None, key_env: str) -> None:
    """A URL with user information (``http://user:KEY@host``) is refused before any request: the
    client sends the key as a bearer token and cannot also send URL credentials (every request
    would fail), and such a URL would put the key in the run's settings. Named without them."""
    if url and "@" in urlsplit(url).netloc:
        raise ValueError(
            f"the base URL {public_url(url)} carries credentials (user:password@ before the host): "
            f"remove them and put the key in ${key_env} instead"
        )


def check_endpoint(
    *,
    base_url: str | Sequence[str] | None,
    model: str,
    api_key_env: str | None,
    request_timeout: float,
    slots: int | None,
) -> tuple[str | None, ...]:
    """The endpoint's replicas, once its settings are checked (a ``ValueError`` naming the first
    wrong one): the one home of these rules, applied when options are validated and again by
    ``ChatEndpoint`` for a library caller."""
    if not model:
        raise ValueError("a model name is required (--model)")
    if request_timeout <= 0:
        raise ValueError("the request timeout must be positive")
    if slots is not None and slots < 1:
        raise ValueError("endpoint slots must be at least 1")
    if api_key_env is not None and not os.environ.get(api_key_env):
        raise ValueError(f"the API key variable {api_key_env} named by --api-key-env is not set")
    replicas: tuple[str | None, ...]
    if base_url is not None and not isinstance(base_url, str):
        replicas = tuple(str(u) for u in base_url)
        if not replicas:
            raise ValueError("an endpoint needs at least one base URL")
    else:
        replicas = (base_url,)
    for url in replicas:
        _refuse_credentials(url, api_key_env or DEFAULT_API_KEY_ENV)
    return replicas


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
        retry: RetryPolicy = DEFAULT_RETRY,
        slots: int | None = None,
    ) -> None:
        self.replicas = check_endpoint(
            base_url=base_url,
            model=model,
            api_key_env=api_key_env,
            request_timeout=request_timeout,
            slots=slots,
        )
        self.slots = slots
        self.api_key_env = api_key_env or DEFAULT_API_KEY_ENV
        self._current = self.replicas[0]  # the replica of the current request (messages name it)
        self.model = model
        self.request_timeout = float(request_timeout)
        self.retry = retry
        self._rng = random.Random()
        self.requests = 0  # attempts sent, retries included
        self.timed_out_requests = 0  # attempts abandoned at the request timeout (then retried)
        self.queue_s = 0.0  # seconds requests waited for a slot (``slots``)
        self.model_s = 0.0  # seconds from sending requests to their replies (or failures)
        self.waiting_on: dict[str, Any] | None = None  # the attempt in flight (episode timeouts)
        # Recorded replies (``--cache``): set by the runner before the episode starts. A hit is neither
        # a request nor model time; it is counted here, with the tokens its recorded reply cost.
        self.cache: SideCache | None = None
        self._clients: dict[str | None, openai.AsyncOpenAI] = {}

    @property
    def base_url(self) -> str | None:
        """The URL of the replica the current (or last) request went to."""
        return self._current

    @base_url.setter
    def base_url(self, url: str | None) -> None:  # one endpoint from now on (before its first request)
        _refuse_credentials(url, self.api_key_env)
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
        if self.cache is not None and self.cache.replay:
            return  # a replay never touches the network: no client is made
        for url in self.replicas:
            if url not in self._clients:
                self._clients[url] = CLIENTS.acquire(
                    self._pool_key(url), functools.partial(self._new_client, url)
                )

    async def close(self) -> None:
        clients, self._clients = self._clients, {}
        for url, client in clients.items():
            await CLIENTS.release(self._pool_key(url), client)

    def _new_client(self, url: str | None) -> openai.AsyncOpenAI:
        import openai  # imported on first use: it takes most of a second, and the CLI imports agents

        return openai.AsyncOpenAI(
            # a key pasted with a trailing newline or space is the same key (the header refuses it)
            api_key=(os.environ.get(self.api_key_env) or "").strip() or _NO_KEY,
            base_url=url,
            timeout=self.request_timeout,
            max_retries=0,  # retries are classified and bounded here (module docstring)
            http_client=aiohttp_transport(openai),
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
        (module docstring). A malformed reply is returned with its problems named, never raised.
        With a cache (``self.cache``) the recorded reply is returned when there is one."""
        request: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        if tools:
            request["tools"] = list(tools)
        request.update({k: v for k, v in params.items() if v is not None})
        if self.cache is not None:
            return await self.cache.complete(request, lambda: self._send(request))
        return await self._send(request)

    @property
    def cache_hits(self) -> int:
        return self.cache.hits if self.cache is not None else 0

    @property
    def cached_usage(self) -> Usage:
        return self.cache.hit_usage if self.cache is not None else Usage()

    async def _send(self, request: dict[str, Any]) -> ChatReply:
        await self.open()
        retries = 0
        failovers = 0  # a failed replica's request sent at once to another one, not a retry
        while True:
            self.requests += 1
            url = self._current = self._choose()
            slot = replica_slots(url, self.slots) if self.slots is not None else None
            if slot is not None:
                queued = time.monotonic()
                await slot.acquire()
                self.queue_s += time.monotonic() - queued
            sent = time.monotonic()
            self.waiting_on = {
                "url": self.where,
                "model": self.model,
                "messages": len(request["messages"]),
                "attempt": retries + 1,
                "sent": sent,
            }
            health = replica_health(url) if url is not None else None
            if health is not None:
                health.outstanding += 1
            try:
                outcome = await self._attempt(request)
            finally:
                self.model_s += time.monotonic() - sent
                if slot is not None:
                    slot.release()
                if health is not None:
                    health.outstanding -= 1
            self.waiting_on = None
            if isinstance(outcome, ChatReply):
                return outcome
            failure, retry_after = outcome
            if health is not None and len(self.replicas) > 1 and replica_fault(failure):
                health.out_until = time.monotonic() + REPLICA_BACKOFF
                if failovers < len(self.replicas) and self._choose() != url:
                    failovers += 1
                    continue
            timed_out = isinstance(failure, TimedOut)
            if timed_out:
                # The server may still be generating the abandoned reply: the retry is counted (the
                # run summary shows it) and waits a whole backoff step, never a jittered near-zero.
                self.timed_out_requests += 1
            if isinstance(failure, Retryable) and retries < self.retry.max_retries:
                await asyncio.sleep(self.retry.delay(retries, self._rng, retry_after, full=timed_out))
                retries += 1
                continue
            if isinstance(failure, Retryable):
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
            return TimedOut(f"no complete reply within {self.request_timeout:g} s"), None
        except openai.APIStatusError as exc:
            return self._status_failure(exc), retry_after(exc.response.headers)
        except openai.APITimeoutError as exc:
            dropped = connection_failure(exc)  # the aiohttp transport reports refusals as timeouts
            if dropped is not None:
                return Retryable(f"connection failed ({self._scrub(dropped)})"), None
            return TimedOut(f"no reply within {self.request_timeout:g} s"), None
        except openai.APIConnectionError as exc:
            cause = connection_failure(exc)
            detail = f"{exc}: {cause}" if cause and cause not in str(exc) else str(exc)
            return Retryable(f"connection failed ({self._scrub(detail)})"), None
        except openai.APIError as exc:  # a reply the client could not read at all
            return Retryable(f"unreadable reply ({self._scrub(str(exc))})"), None
        except Exception as exc:
            if not is_transport_error(exc):
                raise
            # the reply's head broke the HTTP parser (the aiohttp transport lets some errors through)
            said = getattr(exc, "message", None)  # aiohttp's text, without its made-up status 400
            detail = clip(self._scrub(f"{type(exc).__name__}: {said if isinstance(said, str) else exc}"))
            return Retryable(f"unreadable HTTP reply from the endpoint ({detail})"), None
        return read_completion(text if isinstance(text, str) else str(text), self.scrubber)

    def _status_failure(self, exc: openai.APIStatusError) -> Exception:
        status = exc.status_code
        detail = self._scrub(error_text(exc))
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
            return Retryable(f"HTTP {status}: {detail}")
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
        return self.scrubber(text)

    @property
    def scrubber(self) -> Scrubber:
        """The secrets of this endpoint, in every form (``sopbench.secrets``): its key and any
        credential its URLs carry."""
        in_urls = [secret for url in self.replicas if url for secret in url_credentials(url)]
        return Scrubber([os.environ.get(self.api_key_env), *in_urls])
