"""Value helpers: the published evaluator's list/tuple normalisations, fresh copies, cached readings."""

from __future__ import annotations

from typing import Any

from ._pyeval import literal_value, python_value

__all__ = ["as_lists", "as_tuples", "fresh", "read_arguments", "read_output"]

_CACHE_LIMIT = 400_000
_INFINITY = float("inf")
_python_cache: dict[str, Any] = {}
_literal_cache: dict[str, Any] = {}


def as_lists(value: Any) -> Any:
    """Tuples turned into lists, recursively inside lists and dict values (a new structure).

    This is the published ``dfsconvert_tuple_to_list``: strings, sets and dict keys are untouched.
    Because it builds new containers it also snapshots a value that the database may change later.
    """
    kind = type(value)
    if kind is list or kind is tuple:
        return [as_lists(item) for item in value]
    if kind is dict:
        return {key: as_lists(item) for key, item in value.items()}
    return value


def as_tuples(value: Any) -> Any:
    """The published ``dfsconvert_list_to_tuple``: hashable form for the graph check.

    Lists, tuples and sets become tuples, dicts a flat ``(k1, v1, k2, v2, ...)`` tuple with sorted
    keys, recursively; strings and scalars stay. Mixed-type dict keys raise ``TypeError`` as there.
    """
    kind = type(value)
    if kind is str or value is None or kind is int or kind is float or kind is bool:
        return value
    if kind is dict:
        flat: list[Any] = []
        for key, item in sorted(value.items(), key=lambda pair: pair[0]):
            flat.append(as_tuples(key))
            flat.append(as_tuples(item))
        return tuple(flat)
    if isinstance(value, list | tuple | set | frozenset):
        return tuple(as_tuples(item) for item in value)
    if isinstance(value, dict):
        return as_tuples(dict(value))
    return value


def fresh(value: Any) -> Any:
    """A copy that shares no container with ``value`` (tools may store or mutate their arguments)."""
    kind = type(value)
    if kind is dict:
        return {key: fresh(item) for key, item in value.items()}
    if kind is list:
        return [fresh(item) for item in value]
    if kind is tuple:
        return tuple(fresh(item) for item in value)
    if kind is set:
        return {fresh(item) for item in value}
    return value


def _has_json_literal_name(value: Any) -> bool:
    """Whether decoded JSON holds true/false/null (or NaN/Infinity), which Python ``eval`` cannot read."""
    kind = type(value)
    if value is None or kind is bool:
        return True
    if kind is float:
        return value != value or value in (_INFINITY, -_INFINITY)
    if kind is dict:
        return any(_has_json_literal_name(item) for item in value.values())
    if kind is list:
        return any(_has_json_literal_name(item) for item in value)
    return False


def read_arguments(text: str, decoded: dict[str, Any] | None, python_eval: bool) -> Any:
    """Arguments as a protocol reads them; the result may be shared: copy before a tool gets it.

    With ``python_eval`` (quirk Q3) the published reading: ``eval`` of the text. A JSON object
    without true/false/null and without escapes reads the same under ``eval`` as under JSON, so the
    decoded object is used directly; anything else goes through the safe evaluator. Without it,
    the JSON object the agent sent (None when the text is not one).
    """
    if not python_eval:
        return decoded
    if decoded is not None and "\\" not in text and not _has_literal_name_in_values(decoded):
        return decoded
    return read_output(text, python_eval=True)


def _has_literal_name_in_values(arguments: dict[str, Any]) -> bool:
    """``_has_json_literal_name(arguments)``, with a loop for the usual flat string/int arguments."""
    for value in arguments.values():
        kind = type(value)
        if kind is str or kind is int:
            continue
        if _has_json_literal_name(value):
            return True
    return False


def read_output(text: Any, *, python_eval: bool) -> Any:
    """A recorded output (or argument string) as a protocol reads it; shared, never to be mutated."""
    if not isinstance(text, str):
        return text
    cache = _python_cache if python_eval else _literal_cache
    try:
        return cache[text]
    except KeyError:
        pass
    value = python_value(text) if python_eval else literal_value(text)
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    cache[text] = value
    return value
