"""An agent's or a user's options as one typed value: declared once, validated once.

Every agent and user class may declare ``Options``, a frozen pydantic model of what it takes::

    class Echo(Agent):
        class Options(Options):
            greeting: str = option("hello", help="What to say first.")

        def __init__(self, **options):
            self.options = self.Options(**options)

``sopbench run -A greeting=hi`` sets it, a sweep file's ``options`` table too, and an unknown or
ill-typed key is one line naming the agent, the key and the keys it takes. A class that declares no
``Options`` gets one derived from its constructor's keyword parameters. Each field says whether it
decides results (``identity``: a run folder resumes only with the same value) and whether its value
must be redacted before it is stored (``redact="url"``: a URL's credentials).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

Side = Literal["agent", "user"]
Redaction = Literal["url"]


def option(
    default: Any = ..., *, help: str = "", identity: bool = True, redact: Redaction | None = None
) -> Any:
    """A field of an ``Options`` model. ``identity=False``: the option changes no result (where
    requests go, how long they wait), so a run folder resumes whatever its value. ``redact``: how the
    value is stored ("url": without user information or key-like query values)."""
    return Field(
        default, description=help or None, json_schema_extra={"identity": identity, "redact": redact}
    )


# Options that say where and how requests go, never what is asked: the built-in model options mark
# them ``identity=False``, and a plugin's constructor parameter of the same name is read alike.
ENDPOINT_OPTIONS = frozenset(
    {
        "base_url",
        "api_key_env",
        "request_timeout",
        "max_retries",
        "retry_initial_backoff",
        "retry_max_backoff",
        "endpoint_slots",
    }
)


class Options(BaseModel):
    """The options of one agent or user (subclass it; every field through ``option``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    def arguments(self) -> dict[str, Any]:
        """The keyword arguments the class's constructor takes (every field, extra keys included)."""
        return {name: getattr(self, name) for name in type(self).model_fields} | dict(self.model_extra or {})

    def identity(self) -> dict[str, Any]:
        """The options that decide results, as the store keeps them (JSON values), redacted.
        Keys a model does not declare (a plugin taking ``**kwargs``) are identity."""
        from sopbench.secrets import redact_url

        values = self.model_dump(mode="json")
        kept: dict[str, Any] = {}
        for name, value in values.items():
            marks = _marks(type(self), name)
            if not marks.get("identity", True):
                continue
            kept[name] = (
                redact_url(value) if marks.get("redact") == "url" and isinstance(value, str) else value
            )
        return orjson.loads(orjson.dumps(kept, default=str))

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        return tuple(cls.model_fields)


class NoOptions(Options):
    """What an agent or user that takes no option declares."""


def _marks(model: type[BaseModel], name: str) -> dict[str, Any]:
    field = model.model_fields.get(name)
    extra = field.json_schema_extra if field is not None else None
    return dict(extra) if isinstance(extra, dict) else {}


def option_marks(model: type[Options], name: str) -> tuple[bool, str | None]:
    """Whether option ``name`` of ``model`` is identity, and how it is redacted."""
    marks = _marks(model, name)
    return bool(marks.get("identity", True)), marks.get("redact")


OptionsErrorKind = Literal["unknown option", "missing", "bad value", "unknown name"]


class OptionsError(Exception):
    """An option an agent or user does not take, one it needs, a value it refuses, or a name nothing
    is registered under. Not a ``ValueError``: raised inside a pydantic validator it reaches the
    caller as it is, so that the caller can spell the key as its user wrote it (``spelled``)."""

    def __init__(
        self,
        kind: OptionsErrorKind,
        side: Side,
        name: str,
        key: str | None = None,
        problem: str = "",
        allowed: tuple[str, ...] = (),
    ) -> None:
        self.kind, self.side, self.name, self.key, self.problem, self.allowed = (
            kind,
            side,
            name,
            key,
            problem,
            allowed,
        )
        super().__init__(self.spelled())

    def spelled(self, spell: Callable[[Side, str], str] | None = None) -> str:
        """The message, naming keys as ``spell(side, key)`` writes them (default: the key itself)."""

        def named(key: str) -> str:
            return spell(self.side, key) if spell else key

        who = f"{self.side} {self.name!r}"
        if self.kind == "unknown name":
            return self.problem
        if self.kind == "missing":
            return f"{who} needs {named(self.key or '')}"
        if self.kind == "unknown option":
            takes = ", ".join(named(k) for k in self.allowed) if self.allowed else "no option"
            return f"{who} does not take {named(self.key or '')} (it takes {takes})"
        return f"{who} {named(self.key)}: {self.problem}" if self.key else f"{who}: {self.problem}"


def options_model(factory: Callable[..., object]) -> type[Options]:
    """The ``Options`` model of an agent or user class: the one it declares, or one derived from its
    constructor's keyword parameters (any type; ``**kwargs`` lets any key through)."""
    declared = getattr(factory, "Options", None)
    if isinstance(declared, type) and issubclass(declared, Options):
        return declared
    return _derived(factory)


_DERIVED: dict[Callable[..., object], type[Options]] = {}


def _derived(factory: Callable[..., object]) -> type[Options]:
    if factory in _DERIVED:
        return _DERIVED[factory]
    try:
        parameters = dict(inspect.signature(factory).parameters)
    except (TypeError, ValueError):
        parameters = {}
    fields: dict[str, Any] = {}
    open_ended = False
    for name, parameter in parameters.items():
        if parameter.kind is parameter.VAR_KEYWORD:
            open_ended = True
        elif parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            default = ... if parameter.default is parameter.empty else parameter.default
            fields[name] = (
                Any,
                option(
                    default,
                    identity=name not in ENDPOINT_OPTIONS,
                    redact="url" if name == "base_url" else None,
                ),
            )
    config = ConfigDict(frozen=True, extra="allow" if open_ended else "forbid", arbitrary_types_allowed=True)
    model = create_model(f"{getattr(factory, '__name__', 'Plugin')}Options", __base__=Options, **fields)
    model.model_config = {**model.model_config, **config}
    model.model_rebuild(force=True)
    _DERIVED[factory] = model
    return model


def validate_options(
    side: Side, name: str, factory: Callable[..., object], given: Mapping[str, Any]
) -> Options:
    """``given`` checked against the class's ``Options``: the typed value, or ``OptionsError`` naming
    the side, the class's registered name, the first wrong key and the keys it takes."""
    model = options_model(factory)
    try:
        return model.model_validate(dict(given))
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(part) for part in error["loc"][:1]) or None
        if error["type"] == "extra_forbidden":
            raise OptionsError("unknown option", side, name, key, allowed=model.keys()) from None
        if error["type"] == "missing":
            raise OptionsError("missing", side, name, key) from None
        message = str(error["msg"]).removeprefix("Value error, ")
        raise OptionsError("bad value", side, name, key, message) from None
