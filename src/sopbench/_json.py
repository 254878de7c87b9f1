"""The one bound on JSON (and TOML) from outside: depth and size.

Every JSON a model, a task or a file supplies is decoded under these bounds (``decode_bounded``;
files through ``sopbench._io.read_json``), so nothing sopbench keeps can be too deep for orjson to
write back (it stops at 254 levels: a row holding a 260-deep argument once failed to store, on every
resume) or for Python to walk (``json`` and recursive code stop near 1,000 levels), and no file or
reply is decoded whole however large it is. Past a bound is a ``JsonBoundError`` (a ``ValueError``)
with a one-line reason: a malformed reply or call for a model, a skipped file for a loader.
"""

from __future__ import annotations

import json
import tomllib
from typing import Any

import orjson

MAX_VALUE_DEPTH = 64
"""Levels of nesting of one value a model supplies (tool-call arguments, a reply's content)."""
MAX_DOCUMENT_DEPTH = 254
"""Levels of nesting of a document that frames such values (a reply body, a trajectory or task
file, a stored row): as deep as orjson writes back, which is how it is checked (writing a decoded
file back costs a third of walking it; the published files reach 13 levels)."""
MAX_VALUE_BYTES = 4 << 20
"""Characters of one value's JSON text (4 MiB)."""
MAX_REPLY_BYTES = 32 << 20
"""Characters of one reply body (32 MiB)."""
MAX_FILE_BYTES = 256 << 20
"""Bytes of one file as it is decoded, after gunzip or unzip (256 MiB; the largest published file
inflates to 4.2 MB)."""
MAX_INFLATION_RATIO = 1000
"""How many times its compressed size a member of an archive may inflate to, once it is past
1 MiB (the zip-bomb rule: a bomb inflates as much as deflate allows, about 1,030 times; an Inspect
log's header.json was seen inflating 214 times)."""


class JsonBoundError(ValueError):
    """JSON deeper or larger than its bound; the message says which bound (one line)."""


_WRITTEN_AT_ONCE = 16  # items of a list checked together (``_check_writable``)
_COUNTED = 1 << 16  # texts up to this length count their brackets before walking


def check_json_depth(value: Any, limit: int = MAX_VALUE_DEPTH) -> None:
    """Raise ``JsonBoundError`` when ``value`` nests lists and objects deeper than ``limit`` levels
    (a scalar is 0 levels, ``[]`` is 1). Iterative, so any depth is measured without recursion."""
    level = [value] if type(value) is dict or type(value) is list else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            raise JsonBoundError(f"nested deeper than {limit} levels")
        level = [
            child
            for item in level
            for child in (item.values() if type(item) is dict else item)
            if type(child) is dict or type(child) is list
        ]


def check_value(value: Any) -> None:
    """``JsonBoundError`` unless ``value`` (an object a model or a plugin handed over already
    decoded) is within ``MAX_VALUE_DEPTH`` levels and can be written back by orjson."""
    check_json_depth(value, MAX_VALUE_DEPTH)
    _check_writable(value)


def decode_bounded(text: str | bytes, *, size: int = MAX_VALUE_BYTES, lenient: bool = True) -> Any:
    """Decode JSON text a model supplies (tool arguments) within ``MAX_VALUE_DEPTH`` levels and
    ``size``; ``JsonBoundError`` (a ``ValueError``) when it is deeper or larger, ``ValueError``
    when it is not JSON.

    With ``lenient`` (the default), text orjson refuses but Python's ``json`` (the published
    simulator's parser) reads is accepted: ``NaN``, ``Infinity``, lone surrogates; what both refuse
    raises with ``json``'s wording. What is decoded can always be written back by orjson.
    """
    value, checked = _decode(text, MAX_VALUE_DEPTH, size, lenient)
    # A short text with fewer brackets than the bound cannot nest past it (a fast no for arguments;
    # counting costs as much as the walk on a file).
    if not checked and (len(text) > _COUNTED or _brackets(text) > MAX_VALUE_DEPTH):
        check_json_depth(value, MAX_VALUE_DEPTH)
    return value


def decode_document(text: str | bytes, *, size: int = MAX_FILE_BYTES, lenient: bool = False) -> Any:
    """Decode a JSON document from outside (a file, a stored row, a reply body) within
    ``MAX_DOCUMENT_DEPTH`` levels and ``size``; errors as ``decode_bounded``'s."""
    value, checked = _decode(text, MAX_DOCUMENT_DEPTH, size, lenient)
    if not checked:
        _check_writable(value)
    return value


def _decode(text: str | bytes, depth: int, size: int, lenient: bool) -> tuple[Any, bool]:
    """The decoded value, and whether it was checked already (read by Python's ``json``)."""
    if len(text) > size:
        raise JsonBoundError(f"larger than {size_text(size)} ({size_text(len(text))})")
    try:
        return orjson.loads(text), False
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc):
            raise JsonBoundError(f"nested deeper than {depth} levels") from None
        if not lenient:
            raise
        return _decode_leniently(text, depth), True


def _check_writable(value: Any) -> None:
    """``JsonBoundError`` unless orjson can write ``value`` back: at most 254 levels, integers
    within 64 bits (what Python's ``json`` reads beyond them)."""
    try:
        if type(value) is list:
            # A few items at a time, each slice a list as ``value`` is, so every item at the depth
            # it has there: the same answer without one buffer as large as the whole document,
            # grown by copying (over the published trajectory files, lists of records of some
            # 28 KB: scoring them all took 0.3 s less, 6.0 -> 5.7 s).
            for start in range(0, len(value), _WRITTEN_AT_ONCE):
                orjson.dumps(value[start : start + _WRITTEN_AT_ONCE])
        else:
            orjson.dumps(value)
    except TypeError as exc:
        if "Recursion" in str(exc):
            raise JsonBoundError(f"nested deeper than {MAX_DOCUMENT_DEPTH} levels") from None
        raise JsonBoundError(f"holds a value that cannot be stored ({exc})") from None


def decode_toml_bounded(text: str, *, size: int = MAX_VALUE_BYTES) -> dict[str, Any]:
    """A TOML document (a sweep file, a price table) within the bounds of a document:
    ``JsonBoundError`` past them, ``tomllib.TOMLDecodeError`` when it is not TOML."""
    if len(text) > size:
        raise JsonBoundError(f"larger than {size_text(size)} ({size_text(len(text))})")
    try:
        value = tomllib.loads(text)
    except RecursionError:  # tomllib reads nested arrays and inline tables recursively
        raise JsonBoundError(f"nested deeper than {MAX_DOCUMENT_DEPTH} levels") from None
    check_json_depth(value, MAX_DOCUMENT_DEPTH)
    return value


def _brackets(text: str | bytes) -> int:
    if isinstance(text, str):
        return text.count("[") + text.count("{")
    return text.count(b"[") + text.count(b"{")


def _decode_leniently(text: str | bytes, depth: int) -> Any:
    try:
        value = json.loads(text)
    except RecursionError:
        raise JsonBoundError(f"nested deeper than {depth} levels") from None
    check_json_depth(value, depth)
    _check_writable(value)  # integers beyond 64 bits: Python's json keeps them, orjson cannot write them
    return value


def size_text(count: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.3g} {unit}"
    return f"{count} bytes"
