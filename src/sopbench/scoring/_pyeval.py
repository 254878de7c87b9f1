"""What the published evaluator got from ``eval(text)``, computed without ever running ``eval``.

The published evaluator passed every recorded tool-call argument string and every tool output
through ``eval`` and kept the raw string when that raised (spec §7.1, quirk Q3). Reproducing its
verdicts means reproducing what ``eval`` returned, including its accidents:

- JSON ``true``/``false``/``null`` are unknown Python names, so such argument strings stay strings;
- ``2024-10-12`` is arithmetic and evaluates to the integer 2002, while ``2025-01-01`` is a syntax
  error (leading zeros) and stays a string;
- leading spaces and tabs are ignored, as ``eval`` strips them.

``python_value`` parses the text with ``ast`` and evaluates only literals, containers, arithmetic,
comparisons, boolean operators and conditional expressions, with bounds on sizes so that no input can
make it slow. Names that the published evaluator's ``eval`` could resolve (builtins and the globals
of its module) give an ``OPAQUE`` value that equals nothing; every other name raised there, so the
text is kept. Constructs the published data never contains (calls, attributes, comprehensions...)
are not evaluated: the text is kept and ``UNSUPPORTED`` counts them.

``literal_value`` is the sound reading used when the quirk is off: a Python literal
(``ast.literal_eval``) or the text itself.
"""

from __future__ import annotations

import ast
import builtins
import operator
import re
from collections.abc import Callable
from typing import Any

from sopbench.constraints import parse_python_expression, python_literal

__all__ = ["OPAQUE", "UNSUPPORTED", "literal_value", "python_value"]

MAX_TEXT = 200_000  # longer texts are kept as text (eval would have parsed them; none in the data)
MAX_DEPTH = 60
MAX_INT_BITS = 4096
MAX_SEQUENCE = 100_000


class _Opaque:
    """A value the published ``eval`` produced that is no data (a builtin, a module): equal to nothing."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "OPAQUE"


OPAQUE = _Opaque()
UNSUPPORTED: dict[str, int] = {}  # construct name -> how many texts were kept because of it

# Names the published ``eval`` resolved: builtins plus the globals of run_evaluation.py. (``x``,
# the local of its try_eval, evaluates to the text itself.)
_RESOLVABLE_NAMES = frozenset(dir(builtins)) | frozenset(
    {
        "os",
        "copy",
        "argparse",
        "json",
        "re",
        "tqdm",
        "domain_keys",
        "get_title_str",
        "get_dict_str",
        "get_dict_json_str",
        "AVG_PARAMS",
        "evaluator_function_directed_graph",
        "interaction_statistics",
        "domain_statistics",
        "combine_list_numerical_dicts",
        "constraint_group_sort_key",
        "try_eval",
        "save_results",
        "load_existing_results",
        "get_domain_results_str",
        "parse_args",
        "main",
        "__file__",
        "__cached__",
        "__builtins__",
    }
)
_CONSTANT_NAMES = {"True": True, "False": False, "None": None}

_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]+")
# An identifier, then a colon that is not ":=": a syntax error in eval mode (e.g. "Error: ...").
_LABEL = re.compile(r"(?!lambda\b)[A-Za-z_][A-Za-z0-9_]*:(?!=)")


class _Raised(Exception):
    """``eval`` would have raised here: the published code kept the text."""


class _Unsupported(Exception):
    pass


def python_value(text: Any) -> Any:
    """What ``try: eval(text) except: text`` gave, for a recorded string (non-strings unchanged)."""
    if not isinstance(text, str):
        return text  # eval() of a non-string raises TypeError: the value was kept as it was
    fast = _fast_path(text)
    if fast is not _NO_FAST_PATH:
        return fast
    source = text.lstrip(" \t")
    if len(source) > MAX_TEXT:
        return text
    try:
        tree = parse_python_expression(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return text
    try:
        return _Evaluator(text).value(tree.body, 0)
    except _Raised:
        return text
    except _Unsupported as exc:
        UNSUPPORTED[str(exc)] = UNSUPPORTED.get(str(exc), 0) + 1
        return text
    except (RecursionError, MemoryError):
        return text


_NO_FAST_PATH = object()


def _fast_path(text: str) -> Any:
    """The common recorded outputs, answered without parsing."""
    if text in _CONSTANT_NAMES:
        return _CONSTANT_NAMES[text]
    if _INT.fullmatch(text):
        return int(text) if len(text) < 400 else _NO_FAST_PATH
    if _FLOAT.fullmatch(text):
        return float(text)
    if _LABEL.match(text):
        return text
    return _NO_FAST_PATH


def literal_value(text: Any) -> Any:
    """A Python literal's value (no arithmetic, no names but True/False/None), else the text itself."""
    if not isinstance(text, str):
        return text
    fast = _fast_path(text)
    if fast is not _NO_FAST_PATH:
        return fast
    if len(text) > MAX_TEXT:
        return text
    try:
        return python_literal(text.strip())
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return text


def _checked_int(value: Any) -> Any:
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise _Unsupported("huge integer")
    return value


def _checked_size(value: Any) -> Any:
    if isinstance(value, str | bytes | tuple | list) and len(value) > MAX_SEQUENCE:
        raise _Unsupported("huge sequence")
    return _checked_int(value)


def _power(base: Any, exponent: Any) -> Any:
    if isinstance(exponent, int) and isinstance(base, int) and abs(exponent) > 64 and abs(base) > 1:
        raise _Unsupported("large power")
    return base**exponent


def _shift_left(value: Any, amount: Any) -> Any:
    if isinstance(amount, int) and amount > MAX_INT_BITS:
        raise _Unsupported("large shift")
    return value << amount


def _repeat(a: Any, b: Any) -> Any:
    size_a = len(a) if isinstance(a, str | bytes | tuple | list) else 1
    size_b = len(b) if isinstance(b, str | bytes | tuple | list) else 1
    count = b if isinstance(b, int) else a if isinstance(a, int) else 1
    if isinstance(count, int) and max(size_a, size_b) * max(count, 0) > MAX_SEQUENCE:
        raise _Unsupported("large repetition")
    return a * b


_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: _repeat,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: _power,
    ast.LShift: _shift_left,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
}
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
    ast.Not: operator.not_,
    ast.Invert: operator.invert,
}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


class _Evaluator:
    """Evaluates the supported subset of an expression tree with Python's own operators."""

    def __init__(self, text: str) -> None:
        self.text = text

    def value(self, node: ast.AST, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise _Raised  # eval's own recursion limit: the text was kept
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise _Unsupported(type(node).__name__)
        try:
            return method(node, depth + 1)
        except (_Raised, _Unsupported):
            raise
        except (ArithmeticError, TypeError, ValueError, KeyError, IndexError, AttributeError):
            raise _Raised from None

    def _Constant(self, node: ast.Constant, depth: int) -> Any:  # noqa: N802 - ast node names
        return _checked_size(node.value)

    def _Name(self, node: ast.Name, depth: int) -> Any:  # noqa: N802
        if node.id in _CONSTANT_NAMES:
            return _CONSTANT_NAMES[node.id]
        if node.id == "x":
            return self.text
        if node.id in _RESOLVABLE_NAMES:
            return OPAQUE
        raise _Raised  # NameError

    def _Tuple(self, node: ast.Tuple, depth: int) -> Any:  # noqa: N802
        return tuple(self.value(item, depth) for item in node.elts)

    def _List(self, node: ast.List, depth: int) -> Any:  # noqa: N802
        return [self.value(item, depth) for item in node.elts]

    def _Set(self, node: ast.Set, depth: int) -> Any:  # noqa: N802
        return {self.value(item, depth) for item in node.elts}

    def _Dict(self, node: ast.Dict, depth: int) -> Any:  # noqa: N802
        out: dict[Any, Any] = {}
        for key, item in zip(node.keys, node.values, strict=True):
            if key is None:  # {**other}
                merged = self.value(item, depth)
                if not isinstance(merged, dict):
                    raise _Raised
                out.update(merged)
            else:
                k = self.value(key, depth)
                out[k] = self.value(item, depth)
        return out

    def _UnaryOp(self, node: ast.UnaryOp, depth: int) -> Any:  # noqa: N802
        return _checked_int(_UNARY[type(node.op)](self.value(node.operand, depth)))

    def _BinOp(self, node: ast.BinOp, depth: int) -> Any:  # noqa: N802
        function = _BINARY.get(type(node.op))
        if function is None:
            raise _Unsupported(type(node.op).__name__)
        left = self.value(node.left, depth)
        right = self.value(node.right, depth)
        return _checked_size(function(left, right))

    def _BoolOp(self, node: ast.BoolOp, depth: int) -> Any:  # noqa: N802
        is_and = isinstance(node.op, ast.And)
        result: Any = None
        for item in node.values:
            result = self.value(item, depth)
            if bool(result) != is_and:
                return result
        return result

    def _Compare(self, node: ast.Compare, depth: int) -> Any:  # noqa: N802
        left = self.value(node.left, depth)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self.value(comparator, depth)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True

    def _IfExp(self, node: ast.IfExp, depth: int) -> Any:  # noqa: N802
        return self.value(node.body if self.value(node.test, depth) else node.orelse, depth)
