"""The problem the written-out review (``_review``) finds for a constraint none of whose alternative
checks was made: ``NoWayTexts``.

Such a problem reads no call (it names the constraint and its helpers with the call's values), so
it is kept by the values it binds: a conversation refuses the same parts for the same user again
and again. The first for some values (a user refused the first time) is written from templates made
once per constraint: rendering the values and filling the templates is all it costs.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from sopbench.constraints import Expr, Single, Sop, format_value

from ._kept import KeptTexts, value_key
from ._procedure import Text, _never_verified, _none_made
from ._template import text_template

# Problems kept per constraint (one per user a guard's conversations refuse, the latest few hundred).
_TEXTS_KEPT = 256

_UNKNOWN: Any = object()


class NoWayTexts:
    """The problems of the constraint ``single`` (its map plain: each parameter bound once, none to
    a literal) verified by ``process``, alternative helpers none of which was called: as
    ``_PrefixVerifier`` writes them, kept by the values they bind."""

    __slots__ = ("single", "process", "_kept", "_templates")

    def __init__(self, single: Single, process: Expr) -> None:
        self.single = single
        self.process = process
        self._kept: KeptTexts[str] = KeptTexts(_TEXTS_KEPT)
        self._templates: _Templates | None = _UNKNOWN  # worked out at the first problem written

    def problem(self, arguments: Mapping[str, Any], sop: Sop) -> Text:
        """The problem for a call with ``arguments`` (a text, or how to write one: values that are
        not keyed are written only when the problem is shown)."""
        single, process = self.single, self.process
        args = single.bind(arguments)
        every = len(args) == len(single.params or ())  # every variable bound (the usual call)
        values = value_key(args.values())
        # Keyed by the values alone when every parameter is bound (a flat key, a type first), else
        # with the parameters bound (a pair of tuples): the two never meet.
        key = values if values is None or every else (tuple(args), values)
        if key is not None:
            known = self._kept.get(key)
            if known is not None:
                return known
        text = functools.partial(
            _never_verified,
            single,
            arguments,
            process,
            args,
            sop,
            functools.partial(_none_made, process, args),
        )
        if key is None:
            return text
        templates = self._templates
        if templates is _UNKNOWN:
            templates = self._templates = _templates(single, process, sop)
        written = None
        if templates is not None and every:
            written = templates.problem(arguments)
        return self._kept.keep(key, text() if written is None else written)


class _Templates:
    """A constraint's problem when none of its checks was made, as templates over the renderings of
    the call's ``variables`` it binds (each once, in the order of its parameters): ``text``, the
    problem (``_never_verified``) without the detail of its checks, and ``checks``, the text of those
    checks (``_none_made``), whitespace not yet collapsed."""

    __slots__ = ("variables", "text", "checks")

    def __init__(self, variables: tuple[str, ...], text: str, checks: str) -> None:
        self.variables = variables
        self.text = text
        self.checks = checks

    def problem(self, arguments: Mapping[str, Any]) -> str | None:
        """The problem for a call that binds every variable, or None when it names its checks (a
        value holding the words of a failure: written the long way)."""
        rendered = [format_value(arguments[variable]) for variable in self.variables]
        # _inline collapses the runs of whitespace of the outline (a rendering may hold some); the
        # words around it are single-spaced already.
        checks = " ".join(self.checks.format(*rendered).split())
        return None if "did not succeed" in checks else self.text.format(*rendered)


def _templates(single: Single, process: Expr, sop: Sop) -> _Templates | None:
    """The templates of the problems of ``single`` (None: its texts depend on the values otherwise
    than through their renderings, as when two helpers it suggests may be one)."""
    variables = tuple(dict.fromkeys(variable for _, variable in single.params or ()))

    def problem(values: Sequence[Any]) -> str:
        arguments = dict(zip(variables, values, strict=True))
        return _never_verified(single, arguments, process, single.bind(arguments), sop, None)

    def checks(values: Sequence[Any]) -> str:
        return _none_made(process, single.bind(dict(zip(variables, values, strict=True))))

    text, checks_text = text_template(problem, len(variables)), text_template(checks, len(variables))
    return None if text is None or checks_text is None else _Templates(variables, text, checks_text)
