"""The problem the written-out review (``_review``) finds for a constraint verified by one helper or
by alternatives (helpers, or helpers called together), none of which was taken: ``NoWayTexts``.

Such a problem reads no call (it names the constraint and its helpers with the call's values) unless
it names a failed call of its one helper, so it is kept by the values it binds: a conversation
refuses the same parts for the same user again and again. The first for some values (a user refused
the first time) is written from templates made once per constraint: rendering the values and
filling the templates is all it costs.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from sopbench.constraints import Expr, Single, Sop, format_value

from ._index import CallLookup, CallScan
from ._kept import KeptTexts, value_key
from ._procedure import Text, _never_verified, _none_made, _not_called
from ._template import text_template

# Problems kept per constraint (one per user a guard's conversations refuse, the latest few hundred).
_TEXTS_KEPT = 256

_UNKNOWN: Any = object()

# No call at all: what a helper's problem says of it when no call of it failed.
_NO_CALLS = CallScan(())


class NoWayTexts:
    """The problems of the constraint ``single`` (its map plain: each parameter bound once, none to
    a literal) verified by ``process``, one helper or alternatives (maps plain too), when no way was
    taken: as ``_PrefixVerifier`` writes them; those that name no failed call kept by the values
    they bind."""

    __slots__ = ("single", "process", "_kept", "_templates")

    def __init__(self, single: Single, process: Expr) -> None:
        self.single = single
        self.process = process
        self._kept: KeptTexts[str] = KeptTexts(_TEXTS_KEPT)
        self._templates: _Templates | None = _UNKNOWN  # worked out at the first problem written

    def problem(self, arguments: Mapping[str, Any], sop: Sop, calls: CallLookup, step: int) -> Text:
        """The problem for a call with ``arguments`` after the calls before ``step`` (a text, or how
        to write one: values that are not keyed are written only when the problem is shown)."""
        single, process = self.single, self.process
        args = single.bind(arguments)
        if isinstance(process, Single):
            helper_args = process.bind(args)
            inner: Text = functools.partial(_not_called, process, args, calls, helper_args, 0, step)
            text = functools.partial(_never_verified, single, arguments, process, args, sop, inner)
            if calls.last_call(process.name, helper_args, 0, step) is not None:
                return text  # it names the failed call: not kept
        else:
            inner = functools.partial(_none_made, process, args)
            text = functools.partial(_never_verified, single, arguments, process, args, sop, inner)
        every = len(args) == len(single.params or ())  # every variable bound (the usual call)
        values = value_key(args.values())
        # Keyed by the values alone when every parameter is bound (a flat key, a type first), else
        # with the parameters bound (a pair of tuples): the two never meet.
        key = values if values is None or every else (tuple(args), values)
        if key is None:
            return text
        known = self._kept.get(key)
        if known is not None:
            return known
        templates = self._templates
        if templates is _UNKNOWN:
            templates = self._templates = _templates(single, process, sop)
        written = None
        if templates is not None and every:
            written = templates.problem(arguments)
        return self._kept.keep(key, text() if written is None else written)


class _Templates:
    """A constraint's problem when no way was taken (and no call of its one helper failed), as
    templates over the renderings of the call's ``variables`` it binds (each once, in the order of
    its parameters): ``text``, the problem (``_never_verified``) without the detail of what its
    process found, and ``found``, what its process found (``_none_made`` or ``_not_called``),
    whitespace not yet collapsed."""

    __slots__ = ("variables", "text", "found")

    def __init__(self, variables: tuple[str, ...], text: str, found: str) -> None:
        self.variables = variables
        self.text = text
        self.found = found

    def problem(self, arguments: Mapping[str, Any]) -> str | None:
        """The problem for a call that binds every variable, or None when it tells what its process
        found (a value holding the words of a failure: written the long way)."""
        rendered = [format_value(arguments[variable]) for variable in self.variables]
        # _inline collapses the runs of whitespace of an outline (a rendering may hold some; the words
        # around it are single-spaced already): collapsed, the words of a failure are found wherever
        # they would be, and where they would not the problem is only written the long way.
        found = " ".join(self.found.format(*rendered).split())
        return None if "did not succeed" in found else self.text.format(*rendered)


def _templates(single: Single, process: Expr, sop: Sop) -> _Templates | None:
    """The templates of the problems of ``single`` (None: its texts depend on the values otherwise
    than through their renderings, as when two helpers it suggests may be one)."""
    variables = tuple(dict.fromkeys(variable for _, variable in single.params or ()))

    def problem(values: Sequence[Any]) -> str:
        arguments = dict(zip(variables, values, strict=True))
        return _never_verified(single, arguments, process, single.bind(arguments), sop, None)

    def found(values: Sequence[Any]) -> str:
        args = single.bind(dict(zip(variables, values, strict=True)))
        if isinstance(process, Single):
            return _not_called(process, args, _NO_CALLS, process.bind(args), 0, 0)
        return _none_made(process, args)

    text, found_text = text_template(problem, len(variables)), text_template(found, len(variables))
    return None if text is None or found_text is None else _Templates(variables, text, found_text)
