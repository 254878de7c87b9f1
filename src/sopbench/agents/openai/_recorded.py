"""One request's key, its recorded entry, and the cache as one episode sees it (``CacheSession``)
and each of its sides uses it (``SideCache``): the part of the cache that travels with an episode
(to a Ray worker and back). The file itself is ``_cache.py``'s; the key is described there.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import orjson

from sopbench.agents._protocol import AgentInfraError, ContextLengthExceeded, Usage

from ._replies import ChatReply, ChatToolCall

CACHE_FORMAT = 1
"""The cache file's format; a file of a higher one (a newer sopbench) is refused, never changed."""
CacheMode = Literal["read-write", "replay", "off"]
CACHE_MODES: tuple[str, ...] = get_args(CacheMode)
Side = Literal["agent", "user"]


def _canonical(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)


def _sha(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


def deterministic(request: Mapping[str, Any]) -> bool:
    """A request whose reply does not depend on chance: sent with temperature 0."""
    temperature = request.get("temperature")
    return isinstance(temperature, int | float) and not isinstance(temperature, bool) and temperature == 0


def request_fields(request: Mapping[str, Any], *, episode_seed: int, step: int) -> dict[str, Any]:
    """What decides a request's reply, as the cache keys it (module docstring)."""
    fields = {"format": CACHE_FORMAT, **{k: v for k, v in request.items() if v is not None}}
    if not deterministic(request):
        fields["episode_seed"] = episode_seed
        fields["step"] = step
    # As JSON has it (a tuple and a list of the same values are one request).
    loaded: dict[str, Any] = orjson.loads(_canonical(fields))
    return loaded


def request_key(fields: Mapping[str, Any]) -> str:
    return _sha(_canonical(fields))


# ---- entries ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    """One recorded request and its reply (``reply``: ``{"kind": "reply", ...}`` or
    ``{"kind": "context_length", "message": ...}``)."""

    key: str
    request: dict[str, Any]
    reply: dict[str, Any]

    @property
    def model(self) -> str:
        return str(self.request.get("model", ""))

    def texts(self) -> tuple[bytes, bytes]:
        return _canonical(self.request), _canonical(self.reply)

    def checksum(self) -> str:
        request, reply = self.texts()
        return _sha(self.key.encode(), request, reply)

    def answer(self) -> ChatReply:
        """The recorded reply; a recorded context-length refusal is raised again."""
        reply = self.reply
        if reply.get("kind") == "context_length":
            raise ContextLengthExceeded(str(reply.get("message", "")))
        usage = reply.get("usage") or [0, 0]
        return ChatReply(
            content=reply.get("content"),
            tool_calls=tuple(ChatToolCall(*call) for call in reply.get("tool_calls") or ()),
            usage=Usage(int(usage[0]), int(usage[1])),
            finish_reason=reply.get("finish_reason"),
            problems=tuple(reply.get("problems") or ()),
            raw=reply.get("raw"),
            call_problems=tuple(reply.get("call_problems") or ()),
        )

    @property
    def usage(self) -> Usage:
        usage = self.reply.get("usage") or [0, 0]
        return Usage(int(usage[0]), int(usage[1]))


def reply_document(reply: ChatReply) -> dict[str, Any]:
    return {
        "kind": "reply",
        "content": reply.content,
        "tool_calls": [[c.id, c.name, c.arguments] for c in reply.tool_calls],
        "usage": [reply.usage.prompt_tokens, reply.usage.completion_tokens],
        "finish_reason": reply.finish_reason,
        "problems": list(reply.problems),
        "raw": reply.raw,
        "call_problems": list(reply.call_problems),
    }


DAMAGED = "damaged"  # what ``lookup`` returns for an entry whose checksum or JSON is wrong


# ---- why a request missed -------------------------------------------------------------------------------
def difference(recorded: Mapping[str, Any], sent: Mapping[str, Any]) -> list[str]:
    """The fields in which two requests' keyed fields differ, each named (``messages[3]``, ``tools``)."""
    named = []
    for name in sorted(set(recorded) | set(sent)):
        old, new = recorded.get(name), sent.get(name)
        if old == new:
            continue
        if name == "messages" and isinstance(old, list) and isinstance(new, list):
            first = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), None)
            if first is None:
                named.append(f"messages ({len(old)} recorded, {len(new)} now)")
            else:
                role = new[first].get("role", "?") if isinstance(new[first], Mapping) else "?"
                named.append(f"messages[{first}] ({role})")
        elif name == "tools" and isinstance(old, list) and isinstance(new, list) and _same_tools(old, new):
            named.append("tools (the same tools in another order)")
        elif name not in recorded or name not in sent:
            named.append(f"{name} ({'not sent' if name not in sent else 'not recorded'})")
        elif isinstance(old, str | int | float | bool) and isinstance(new, str | int | float | bool):
            named.append(f"{name} ({old!r} recorded, {new!r} now)")
        else:
            named.append(name)
    return named


def _same_tools(old: list[Any], new: list[Any]) -> bool:
    return sorted(_canonical(t) for t in old) == sorted(_canonical(t) for t in new)


# ---- one episode's view of the cache ----------------------------------------------------------------------
@dataclass
class CacheSession:
    """The cache as one episode sees it: the entries recorded for it (handed over before it starts),
    what it records, and its counts. Travels to a remote worker and back (picklable); ``fallback``
    (a lookup in the file, in the driver's process only) is dropped on the way."""

    mode: CacheMode
    episode: str  # "<task id>#<run>"
    seed: int
    known: dict[str, Entry] = field(default_factory=dict)
    damaged: set[str] = field(default_factory=set)  # keys whose recorded entry is damaged
    recorded_uses: dict[tuple[str, int], list[str]] = field(default_factory=dict)  # (side, step) -> keys
    recorded: list[Entry] = field(default_factory=list)  # new entries, written by the driver
    uses: list[tuple[str, int, str]] = field(default_factory=list)  # (side, step, key) of this episode
    hits: int = 0
    misses: int = 0
    hit_usage: Usage = field(default_factory=Usage)  # the tokens the recorded replies of the hits cost
    fallback: Callable[[str], Entry | str | None] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "fallback": None}

    def side(self, side: Side, scrub: Callable[[str], str]) -> SideCache:
        return SideCache(self, side, scrub)

    def lookup(self, key: str) -> Entry | str | None:
        if key in self.known:
            return self.known[key]
        if key in self.damaged:
            return DAMAGED
        found = self.fallback(key) if self.fallback is not None else None
        if isinstance(found, Entry):
            self.known[key] = found
        return found

    def explain_miss(self, side: str, step: int, fields: Mapping[str, Any], damaged: bool) -> str:
        where = (
            f"replay: no recorded reply for episode {self.episode} (seed {self.seed}), {side} request {step}"
        )
        if damaged:
            return f"{where}: its recorded entry is damaged (checksum or JSON)"
        keys = self.recorded_uses.get((side, step), [])
        if not keys:  # the nearest then: any request of this side of the episode
            keys = [k for (s, _), ks in sorted(self.recorded_uses.items()) if s == side for k in ks]
        candidates = [self.known[k] for k in keys if k in self.known]
        if not candidates:
            return f"{where}: the cache holds no request of this episode's {side}"
        nearest = min((difference(c.request, fields) for c in candidates), key=len)
        return f"{where}: the nearest recorded request differs in {', '.join(nearest) or 'its key only'}"


class SideCache:
    """The cache as one side (the agent, the ``llm`` user) of an episode uses it: its requests are
    numbered in order (``step``, from 0)."""

    def __init__(self, session: CacheSession, side: Side, scrub: Callable[[str], str]) -> None:
        self.session = session
        self.side = side
        self.scrub = scrub
        self.steps = 0
        self.hits = 0
        self.hit_usage = Usage()

    @property
    def replay(self) -> bool:
        return self.session.mode == "replay"

    async def complete(
        self, request: Mapping[str, Any], fetch: Callable[[], Awaitable[ChatReply]]
    ) -> ChatReply:
        """The recorded reply to ``request``, else (``read-write``) ``fetch()``'s, recorded; in
        ``replay`` a miss is an ``AgentInfraError`` of one line explaining it."""
        session = self.session
        step, self.steps = self.steps, self.steps + 1
        fields = request_fields(request, episode_seed=session.seed, step=step)
        key = request_key(fields)
        found = session.lookup(key)
        if isinstance(found, Entry):
            session.hits += 1
            self.hits += 1
            self.hit_usage += found.usage
            session.hit_usage += found.usage
            session.uses.append((self.side, step, key))
            return found.answer()
        session.misses += 1
        if self.replay:
            raise AgentInfraError(session.explain_miss(self.side, step, fields, found == DAMAGED))
        stored = orjson.loads(self.scrub(_canonical(fields).decode()))
        try:
            reply = await fetch()
        except ContextLengthExceeded as exc:  # the model's limit: as much a reply as any
            self._record(key, stored, {"kind": "context_length", "message": str(exc)}, step)
            raise
        self._record(key, stored, reply_document(reply), step)
        return reply

    def _record(self, key: str, request: dict[str, Any], reply: dict[str, Any], step: int) -> None:
        entry = Entry(key, request, reply)
        self.session.known[key] = entry
        self.session.damaged.discard(key)
        self.session.recorded.append(entry)
        self.session.uses.append((self.side, step, key))
