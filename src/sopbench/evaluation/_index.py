"""The calls of a trace as the procedure judgement asks about them: by name and bound arguments.

The judgement asks three questions of the calls in a window ``[after, before)``: the first that
succeeded with a helper's name and arguments, the last such call whatever its outcome, and (for a
runtime guard) the latest yes/no answer one gave. ``CallScan`` answers them by reading the calls in
order, the definition; ``CallIndex`` keeps the calls indexed as they are appended, so the answers
cost the same at the thousandth call as at the first. Both match arguments with ``==`` exactly:
values that hash consistently with ``==`` (text, numbers but NaN, booleans, None, tuples of these)
are looked up; any other value is compared one call at a time, as the scan does.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from ._model import ToolCall

Answer = Callable[[Any], "bool | None"]


class CallLookup(Protocol):
    """What the procedure judgement reads of the calls before the one it judges."""

    def __len__(self) -> int: ...

    def __getitem__(self, position: int) -> ToolCall: ...

    def first_success(self, name: str, expected: Mapping[str, Any], after: int, before: int) -> int | None:
        """Position of the first call in ``[after, before)`` named ``name`` whose arguments include
        ``expected`` and that succeeded, or None."""
        ...

    def last_call(self, name: str, expected: Mapping[str, Any], after: int, before: int) -> int | None:
        """Position of the last call in ``[after, before)`` named ``name`` whose arguments include
        ``expected`` (succeeded or not), or None."""
        ...

    def latest_answer(self, name: str, expected: Mapping[str, Any], before: int) -> bool | None:
        """The answer of the latest call before ``before`` named ``name``, with arguments including
        ``expected``, that succeeded with a yes/no answer (as the lookup's ``answer`` reads its
        output); None when there is none."""
        ...


def matches(arguments: Mapping[str, Any], expected: Mapping[str, Any]) -> bool:
    """Whether a call's ``arguments`` bind every parameter of ``expected`` to an equal value."""
    return all(key in arguments and arguments[key] == value for key, value in expected.items())


class CallScan:
    """``CallLookup`` over a sequence of calls, reading them in order (the definition)."""

    def __init__(self, calls: Sequence[ToolCall], *, answer: Answer | None = None) -> None:
        self.calls = calls
        self._answer = answer

    def __len__(self) -> int:
        return len(self.calls)

    def __getitem__(self, position: int) -> ToolCall:
        return self.calls[position]

    def first_success(self, name: str, expected: Mapping[str, Any], after: int, before: int) -> int | None:
        for index in range(after, before):
            call = self.calls[index]
            if call.succeeded and call.name == name and matches(call.arguments, expected):
                return index
        return None

    def last_call(self, name: str, expected: Mapping[str, Any], after: int, before: int) -> int | None:
        for index in range(before - 1, after - 1, -1):
            call = self.calls[index]
            if call.name == name and matches(call.arguments, expected):
                return index
        return None

    def latest_answer(self, name: str, expected: Mapping[str, Any], before: int) -> bool | None:
        if self._answer is None:
            return None
        for index in range(min(before, len(self.calls)) - 1, -1, -1):
            call = self.calls[index]
            if call.succeeded and call.name == name and matches(call.arguments, expected):
                answer = self._answer(call.output)
                if answer is not None:
                    return answer
        return None


_ATOMS = frozenset({str, int, bool, type(None)})


def _plain(values: tuple[Any, ...]) -> bool:
    """Whether ``values`` may be looked up by hash: equal values hash alike and equal themselves."""
    for value in values:
        kind = type(value)
        if kind in _ATOMS:
            continue
        if kind is float:
            if value != value:  # NaN equals nothing, itself included
                return False
        elif kind is not tuple or not _plain(value):
            return False
    return True


class _Entry:
    """The positions of the calls of one helper identity (name, parameters, values)."""

    __slots__ = ("calls", "succeeded", "answered", "answers")

    def __init__(self) -> None:
        self.calls: list[int] = []
        self.succeeded: list[int] = []
        self.answered: list[int] = []  # succeeded with a yes/no answer
        self.answers: list[bool] = []


# What ``CallIndex._usual_entry`` answers for a question it leaves to ``_lookup``.
_UNUSUAL = _Entry()


class _Bucket:
    """The calls of one name indexed by the values of one set of parameters."""

    __slots__ = ("keys", "entries", "odd")

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.keys = keys
        self.entries: dict[tuple[Any, ...], _Entry] = {}
        self.odd: list[int] = []  # calls whose values for ``keys`` cannot be looked up by hash


class CallIndex:
    """``CallLookup`` kept up to date call by call: ``append`` costs about as much whatever came
    before, and so does each answer (a binary search in the calls of one helper identity).

    ``answer`` reads a succeeded call's output as a yes/no answer (None: not one); ``latest_answer``
    gives the latest such answer of a helper identity. The index holds the calls it is given; the
    ``ToolCall`` objects are shared, never copied.
    """

    def __init__(self, calls: Iterable[ToolCall] = (), *, answer: Answer | None = None) -> None:
        self._calls: list[ToolCall] = []
        self._answer = answer
        self._by_name: dict[str, list[int]] = {}
        self._buckets: dict[tuple[str, tuple[str, ...]], _Bucket] = {}
        self._buckets_of: dict[str, list[_Bucket]] = {}
        for call in calls:
            self.append(call)

    def __len__(self) -> int:
        return len(self._calls)

    def __getitem__(self, position: int) -> ToolCall:
        return self._calls[position]

    def __iter__(self) -> Iterator[ToolCall]:
        return iter(self._calls)

    def append(self, call: ToolCall) -> None:
        position = len(self._calls)
        self._calls.append(call)
        self._by_name.setdefault(call.name, []).append(position)
        for bucket in self._buckets_of.get(call.name, ()):
            self._file(bucket, position, call)

    def _file(self, bucket: _Bucket, position: int, call: ToolCall) -> None:
        arguments = call.arguments
        if not all(key in arguments for key in bucket.keys):
            return  # it lacks a parameter, so it never matches
        values = tuple(arguments[key] for key in bucket.keys)
        if not _plain(values):
            bucket.odd.append(position)
            return
        entry = bucket.entries.get(values)
        if entry is None:
            entry = bucket.entries[values] = _Entry()
        entry.calls.append(position)
        if call.succeeded:
            entry.succeeded.append(position)
            answer = None if self._answer is None else self._answer(call.output)
            if answer is not None:
                entry.answered.append(position)
                entry.answers.append(answer)

    def expect(self, name: str, keys: Iterable[str]) -> None:
        """Index the calls of ``name`` by the values of ``keys`` from now on (a question the judgement
        will ask; one it was not told of is indexed when first asked, reading the calls of that
        name once)."""
        self._bucket(name, tuple(keys))

    def _bucket(self, name: str, keys: tuple[str, ...]) -> _Bucket:
        bucket = self._buckets.get((name, keys))
        if bucket is None:
            bucket = self._buckets[(name, keys)] = _Bucket(keys)
            self._buckets_of.setdefault(name, []).append(bucket)
            for position in self._by_name.get(name, ()):
                self._file(bucket, position, self._calls[position])
        return bucket

    def _lookup(self, name: str, expected: Mapping[str, Any]) -> tuple[_Entry | None, list[int]] | None:
        """The entry of ``expected``'s values and the positions to compare one by one; None when
        ``expected`` itself cannot be looked up (then every call of ``name`` is compared)."""
        values = tuple(expected.values())
        for value in values:
            if type(value) not in _ATOMS and not _plain(values):
                return None
        keys = tuple(expected)
        bucket = self._buckets.get((name, keys)) or self._bucket(name, keys)
        return bucket.entries.get(values), bucket.odd

    def _usual_entry(self, name: str, expected: Mapping[str, Any]) -> _Entry | None:
        """``_lookup`` of the usual questions, written out (a guard's refusal asks several for each
        constraint of its rule): the entry of a helper asked with one value of an atom type (one
        user, one id) or with none, when no call of it had an odd value there (None: no call with
        that value); ``_UNUSUAL`` for any other question (``_lookup`` answers it)."""
        keys: tuple[str, ...] = ()
        values: tuple[Any, ...] = ()
        if expected:
            if len(expected) > 1:
                return _UNUSUAL
            ((key, value),) = expected.items()
            if type(value) not in _ATOMS:
                return _UNUSUAL
            keys, values = (key,), (value,)
        bucket = self._buckets.get((name, keys)) or self._bucket(name, keys)
        if bucket.odd:
            return _UNUSUAL
        return bucket.entries.get(values)

    def _compared(self, name: str, odd: list[int] | None) -> list[int]:
        return self._by_name.get(name, []) if odd is None else odd

    def first_success(self, name: str, expected: Mapping[str, Any], after: int, before: int) -> int | None:
        entry = self._usual_entry(name, expected)
        if entry is not _UNUSUAL:
            if entry is None:
                return None
            succeeded = entry.succeeded
            at = bisect_left(succeeded, after)
            return succeeded[at] if at < len(succeeded) and succeeded[at] < before else None
        found = self._lookup(name, expected)
        entry, odd = (None, None) if found is None else found
        best: int | None = None
        if entry is not None:
            at = bisect_left(entry.succeeded, after)
            if at < len(entry.succeeded) and entry.succeeded[at] < before:
                best = entry.succeeded[at]
        compared = odd if odd is not None else self._by_name.get(name, ())
        if not compared:
            return best
        for position in compared:
            if best is not None and position >= best or position >= before:
                break
            call = self._calls[position]
            if position >= after and call.succeeded and matches(call.arguments, expected):
                return position
        return best

    def last_call(self, name: str, expected: Mapping[str, Any], after: int, before: int) -> int | None:
        found = self._lookup(name, expected)
        entry, odd = (None, None) if found is None else found
        best: int | None = None
        if entry is not None:
            at = bisect_left(entry.calls, before) - 1
            if at >= 0 and entry.calls[at] >= after:
                best = entry.calls[at]
        for position in reversed(self._compared(name, odd)):
            if best is not None and position <= best or position < after:
                break
            if position < before and matches(self._calls[position].arguments, expected):
                return position
        return best

    def latest_answer(self, name: str, expected: Mapping[str, Any], before: int) -> bool | None:
        if self._answer is None:
            return None
        entry = self._usual_entry(name, expected)
        if entry is not _UNUSUAL:
            if entry is None:
                return None
            at = bisect_left(entry.answered, before) - 1
            return entry.answers[at] if at >= 0 else None
        found = self._lookup(name, expected)
        entry, odd = (None, None) if found is None else found
        best, answer = -1, None
        if entry is not None:
            at = bisect_left(entry.answered, before) - 1
            if at >= 0:
                best, answer = entry.answered[at], entry.answers[at]
        for position in reversed(self._compared(name, odd)):
            if position <= best:
                break
            call = self._calls[position]
            if position < before and call.succeeded and matches(call.arguments, expected):
                odd_answer = self._answer(call.output)
                if odd_answer is not None:
                    return odd_answer
        return answer
