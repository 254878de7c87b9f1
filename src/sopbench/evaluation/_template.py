"""A text written from values, as a template over their renderings: ``text_template``.

A refusal's texts name the call's values (``format_value``) among words that depend only on the
rule. Writing one for new values (a first refusal) walks the rule's parts, binds its helpers and
renders them; a template, worked out once by writing the text for stand-ins of the values, leaves
only the rendering of each value and one ``str.format``. The text is written by the functions that
write it for real values, so the template cannot say otherwise than they do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

_MARK = "\x00"


class _StandIn:
    """A value whose rendering (``repr``, as ``format_value`` renders what is not text) is a mark
    numbering it; it notes whether it was compared or hashed (then what is written depends on more
    than the values' renderings: which of two helper calls are one, for instance), and how many times
    it was rendered."""

    __slots__ = ("mark", "read", "rendered")

    def __init__(self, number: int) -> None:
        self.mark = f"{_MARK}{number}{_MARK}"
        self.read = False
        self.rendered = 0

    def __repr__(self) -> str:
        self.rendered += 1
        return self.mark

    def __eq__(self, other: object) -> bool:
        if other is not self:
            self.read = True
        return other is self

    def __hash__(self) -> int:
        self.read = True
        return id(self)


def text_template(write: Callable[[Sequence[Any]], str], count: int) -> str | None:
    """What ``write`` writes from ``count`` values, as a ``str.format`` template numbering their
    renderings; None when what it writes depends on the values otherwise than through their
    renderings (they were compared, hashed or ordered, or a rendering was not put in as it is), or
    when its own words hold the mark character.

    ``template.format(*map(format_value, values)) == write(values)`` for a ``write`` that reads a
    value only to render it (``format_value``) and puts each rendering in the text as it is."""
    stand_ins = [_StandIn(n) for n in range(count)]
    try:
        text = write(stand_ins)
    except Exception:  # noqa: BLE001 - it reads a value otherwise than rendering it (orders it, ...)
        return None
    if any(stand_in.read for stand_in in stand_ins):
        return None
    pieces = text.split(_MARK)
    if len(pieces) != 2 * sum(stand_in.rendered for stand_in in stand_ins) + 1:
        return None
    template = []
    for at, piece in enumerate(pieces):
        if at % 2 == 0:
            template.append(piece.replace("{", "{{").replace("}", "}}"))
        elif piece.isascii() and piece.isdigit() and int(piece) < count:
            template.append(f"{{{piece}}}")
        else:
            return None
    written = "".join(template)
    return written if written.format(*[stand_in.mark for stand_in in stand_ins]) == text else None
