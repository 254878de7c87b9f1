"""Reading helpers shared by the task and trajectory loaders, and the one atomic file write.
Files are read within the bounds of ``sopbench._json`` (size, inflated size, JSON depth).

Every failure while reading published data becomes one ``LoadError`` that names the file, the record
(or task) and the field, e.g. ``bank/foo.json.gz: record 3: field "task": missing``. Validators raise
the lighter ``FieldError`` (a field path and a message); the loaders add the file and record.
"""

from __future__ import annotations

import gc
import gzip
import io
import os
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from os import PathLike
from pathlib import Path
from types import ModuleType
from typing import IO, Any, TypeAlias, cast

import orjson

from sopbench._json import MAX_FILE_BYTES, MAX_INFLATION_RATIO, JsonBoundError, decode_document, size_text
from sopbench._outputs import refuse_output
from sopbench.constraints import clip

_zlib: ModuleType = zlib
_GZIP_ERRORS: tuple[type[BaseException], ...] = (EOFError, OSError, zlib.error)
try:  # ISA-L's gunzip is ~10x faster than zlib's on the published files (gunzip was a third of loading)
    from isal import isal_zlib

    _zlib = isal_zlib
    # isal's stub declares its error an instance; at run time it is the exception class
    _GZIP_ERRORS = (*_GZIP_ERRORS, cast(type[BaseException], isal_zlib.error))
except ImportError:  # the optional fast path: the standard library reads the same files
    pass

StrPath: TypeAlias = str | PathLike[str]

GZIP_MAGIC = b"\x1f\x8b"

_JSON_NAMES: dict[type, str] = {
    dict: "an object",
    list: "a list",
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}


class LoadError(Exception):
    """Input that cannot be loaded, located by file, record (or task) index and field path."""

    def __init__(
        self,
        message: str,
        *,
        file: StrPath | None = None,
        record: int | None = None,
        field: str | None = None,
        item: str = "record",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = None if file is None else Path(file)
        self.record = record
        self.field = field
        self.item = item  # what ``record`` counts: "record" in trajectory files, "task" in task files

    def __str__(self) -> str:
        return self.describe()

    def describe(self, *, full_path: bool = False) -> str:
        """The one-line message; the file as ``<folder>/<file>``, or with ``full_path`` as it was
        given (what a list of skipped files shows: eleven files under ``runs/*/bank/`` once read
        alike)."""
        parts = []
        if self.file is not None:
            parts.append(str(self.file) if full_path else display_path(self.file))
        if self.record is not None:
            parts.append(f"{self.item} {self.record}")
        if self.field:
            parts.append(f'field "{self.field}"')
        parts.append(self.message)
        # One line, always: callers print these in lists and logs.
        return ": ".join(parts).replace("\r", "\\r").replace("\n", "\\n")

    def __repr__(self) -> str:
        return f"LoadError({str(self)!r})"


class FieldError(ValueError):
    """A field that fails validation; ``field`` is its path inside the record, e.g. ``task.user_goal``."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message

    def located(self, *, file: StrPath | None, record: int | None, item: str = "record") -> LoadError:
        return LoadError(self.message, file=file, record=record, field=self.field, item=item)


def display_path(path: Path) -> str:
    """The short name used in messages: ``<folder>/<file>`` (the folder is the domain for trajectories)."""
    return f"{path.parent.name}/{path.name}" if path.parent.name else path.name


# -- reading files ------------------------------------------------------------------------------------


@contextmanager
def atomic_file(path: Path) -> Iterator[IO[bytes]]:
    """A binary file that becomes ``path`` only when the block completes: written beside the target
    (a hidden ``.part`` file), flushed to disk, given the mode a plain ``open(path, "w")`` would give
    (the existing file's, or 0666 less the umask), then renamed over it. On any error or interrupt the
    temporary file is removed and an existing file under that name is left as it was. Through a
    symlink, the file it points to is replaced and the link kept. The one atomic writer of sopbench:
    a path the output guard refuses (``sopbench._outputs.refuse_output``) raises ``OutputRefused``
    before anything is written."""
    refuse_output(path)
    path = path.resolve() if path.is_symlink() else path
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    temporary = Path(name)
    try:
        with os.fdopen(handle, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, _plain_mode(path))
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _plain_mode(path: Path) -> int:
    """The permissions ``open(path, "w")`` would leave (``mkstemp`` makes 0600 files)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` with ``atomic_file`` (its folder is created when missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path) as out:
        out.write(data)


def read_bytes(path: StrPath) -> bytes:
    """The file's bytes, gunzipped when they start with the gzip magic (whatever the file is called)."""
    return _read(Path(path))[0]


def _read(path: Path, limit: int = MAX_FILE_BYTES) -> tuple[bytes, bool]:
    """The file's bytes (gunzipped when they start with the gzip magic) and whether they were gzip;
    ``LoadError`` when either is larger than ``limit``."""
    try:
        if path.stat().st_size > limit:
            raise LoadError(f"larger than {size_text(limit)}, the bound on a file sopbench reads", file=path)
        data = path.read_bytes()
    except IsADirectoryError:
        try:
            os.listdir(path)
        except OSError as exc:
            raise LoadError(f"cannot read folder ({exc.strerror or exc})", file=path) from None
        raise LoadError("is a folder, not a file", file=path) from None
    except OSError as exc:
        raise LoadError(f"cannot read file ({exc.strerror or exc})", file=path) from None
    if data[:2] != GZIP_MAGIC:
        return data, False
    try:
        out = _gunzip(data, limit)
    except _GZIP_ERRORS as exc:  # BadGzipFile is an OSError; truncation is EOFError
        raise LoadError(f"truncated or corrupt gzip data ({exc})", file=path) from None
    if len(out) > limit:
        raise LoadError(
            f"inflates to more than {size_text(limit)}, the bound on a file sopbench reads", file=path
        )
    return out, True


def _gunzip(data: bytes, limit: int) -> bytes:
    """``gzip.decompress(data)``, stopping past ``limit`` bytes (a gzip bomb is never inflated
    whole); a file of one whole gzip member takes a third less time."""
    try:
        # One zlib stream with the gzip wrapper (which checks the CRC and length), without the
        # member loop of gzip.decompress.
        stream = _zlib.decompressobj(wbits=31)
        out = stream.decompress(data, limit + 1)
        if len(out) > limit or (stream.eof and not stream.unused_data.strip(b"\0")):
            return out
    except _GZIP_ERRORS:
        pass
    # Several members, trailing data, truncation or corruption: gzip's own reading and errors.
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as members:
        return members.read(limit + 1)


def walk_files(folder: Path, wanted: Callable[[str], bool]) -> tuple[list[Path], list[Path]]:
    """(the files below ``folder`` whose name is ``wanted``, the folders that could not be listed),
    each sorted. Symlinks are followed, but each real folder is visited once: two links that loop
    (``self -> ../loop``, ``bank/up -> ..``) once made ``os.walk(followlinks=True)`` explore an
    exponential number of paths. The one walker of folders given on the command line."""
    found: list[Path] = []
    unreadable: list[Path] = []
    visited: set[tuple[int, int]] = set()
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            status = current.stat()
            key = (status.st_dev, status.st_ino)
            if key in visited:
                continue
            visited.add(key)
            with os.scandir(current) as entries:
                listed = list(entries)
        except OSError:
            unreadable.append(current)
            continue
        for entry in listed:
            try:
                if entry.is_dir():  # follows a link
                    pending.append(Path(entry.path))
                elif wanted(entry.name) and entry.is_file():
                    found.append(Path(entry.path))
            except OSError:  # a link that loops on itself, or a file gone meanwhile
                continue
    return sorted(found), sorted(unreadable)


def check_zip_archive(path: StrPath) -> None:
    """``LoadError`` (one line, naming the member) unless ``path`` is a zip archive whose every
    member inflates to at most ``MAX_FILE_BYTES`` and, past 1 MiB, at most ``MAX_INFLATION_RATIO``
    times its compressed size. Read before any member is inflated; Python's zipfile then never
    yields more than a member's declared size, so the declared sizes are the bound."""
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        raise LoadError(f"not a readable zip archive ({exc})", file=path) from None
    for member in members:
        inflated = member.file_size
        if inflated > MAX_FILE_BYTES:
            raise LoadError(
                f"member {member.filename!r} inflates to {size_text(inflated)}, more than the "
                f"{size_text(MAX_FILE_BYTES)} sopbench reads",
                file=path,
            )
        if inflated > 1 << 20 and inflated > MAX_INFLATION_RATIO * max(member.compress_size, 1):
            raise LoadError(
                f"member {member.filename!r} inflates {inflated // max(member.compress_size, 1):,} times "
                f"(to {size_text(inflated)}; more than {MAX_INFLATION_RATIO:,} times is taken for a zip bomb)",
                file=path,
            )


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a file is decoded, then file what was built as old.

    Decoding a trajectory file allocates millions of small containers and no reference cycles. The
    collector would scan them at every young collection while they are built, and then once more in
    each younger generation they pass through, although they live as long as the file is in use.
    So it is paused for the decode, and afterwards everything is moved straight to the oldest
    generation (``gc.freeze`` then ``gc.unfreeze``: two list splices, no scan), where only the rare
    full collections look at it. That changes when cycles are collected, never whether. Skipped
    when the program froze objects itself, so as not to unfreeze them.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def read_json(path: StrPath) -> Any:
    """Decode a plain or gzip-compressed JSON file.

    A file named ``.gz`` that holds plain JSON is read; one that is neither gzip nor JSON is
    reported as not gzip (rather than as invalid JSON).
    """
    path = Path(path)
    data, was_gzip = _read(path)
    try:
        return decode_document(data)
    except JsonBoundError as exc:
        raise LoadError(f"JSON {exc}", file=path) from None
    except orjson.JSONDecodeError as exc:
        if not was_gzip and path.name.endswith(".gz"):
            raise LoadError(
                "not gzip data (the name ends in .gz, the content is neither gzip nor JSON)", file=path
            ) from None
        raise LoadError(f"invalid JSON ({exc})", file=path) from None


# -- validating decoded JSON ---------------------------------------------------------------------------


def at(parent: str, key: str | int) -> str:
    """The path of ``key`` inside ``parent``: ``a.b``, ``a[3]``."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else key


def json_type(value: object) -> str:
    """How a JSON value is called in messages ("an object", "null", ...)."""
    return _JSON_NAMES.get(type(value), type(value).__name__)


def expect(value: Any, kind: type | tuple[type, ...], field: str) -> Any:
    """``value`` if it has one of the JSON types ``kind``; a boolean never passes as a number."""
    if _has_type(value, kind):
        return value
    raise _type_error(value, kind, field)


def present(obj: dict[str, Any], key: str, parent: str) -> Any:
    """The value of ``key``, of any type (null included), which must be there."""
    if key not in obj:
        raise FieldError(at(parent, key), "missing")
    return obj[key]


def required(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], parent: str) -> Any:
    value = present(obj, key, parent)
    if _has_type(value, kind):  # the path is only spelled out on failure: this runs millions of times
        return value
    raise _type_error(value, kind, at(parent, key))


def optional(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], parent: str) -> Any:
    """The value of ``key``, or ``None`` when it is missing or null."""
    value = obj.get(key)
    if value is None or _has_type(value, kind):
        return value
    raise _type_error(value, kind, at(parent, key))


def _has_type(value: Any, kind: type | tuple[type, ...]) -> bool:
    if type(value) is bool:
        return kind is bool or (isinstance(kind, tuple) and bool in kind)
    return isinstance(value, kind)


def _type_error(value: Any, kind: type | tuple[type, ...], field: str) -> FieldError:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    wanted = " or ".join(_JSON_NAMES.get(k, k.__name__) for k in kinds)
    return FieldError(field, f"expected {wanted}, got {json_type(value)}")


def expect_flag(value: Any, field: str) -> bool:
    """A boolean; older files store flags as 0/1."""
    if type(value) is bool:
        return value
    if type(value) is int and value in (0, 1):
        return bool(value)
    raise FieldError(field, f"expected a boolean (or 0/1), got {show(value)}")


def expect_str_map(value: Any, field: str) -> dict[str, str]:
    """An object whose values are all strings (parameter -> variable maps)."""
    mapping = expect(value, dict, field)
    for key, item in mapping.items():
        if not isinstance(item, str):
            raise FieldError(at(field, key), f"expected a string, got {json_type(item)}")
    return mapping


def show(value: object, limit: int = 60) -> str:
    """A short one-line rendering of a value for messages."""
    return clip(repr(value), limit)
