"""The package boundaries hold: the layering (import-linter contracts in pyproject.toml) and no
module importing a private module or name of another package (src/ and benchmarks/)."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src"


def test_import_linter_contracts_are_kept() -> None:
    pytest.importorskip("importlinter")
    # In a child process: import-linter reconfigures logging, which would silence other tests' loggers.
    program = (
        "import sys; from importlinter.cli import lint_imports; "
        f"sys.exit(lint_imports(config_filename={str(ROOT / 'pyproject.toml')!r}, no_cache=True, no_logo=True))"
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


def module_name(path: Path) -> str:
    """``sopbench.scoring._engine`` for src/sopbench/scoring/_engine.py (benchmarks: ``benchmarks.x``)."""
    base = SOURCE if path.is_relative_to(SOURCE) else ROOT
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def private_imports(module: str, source: str, is_package: bool = False) -> Iterator[str]:
    """Every import in ``source`` (the text of ``module``) of a private module or name of another
    package: ``sopbench.X._y`` or ``from sopbench.X import _y`` from outside ``sopbench.X``.

    A private part is private to the package that holds it: the root package's own modules
    (``sopbench._io``) are shared by every package inside it, never by benchmarks.
    """
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" for alias in node.names]
        for target in targets:
            parts = target.split(".")
            if parts[0] != "sopbench":
                continue
            for depth, part in enumerate(parts[1:], start=1):
                if not is_private(part):
                    continue
                owning = ".".join(parts[:depth])  # the package whose private part this is
                if module != owning and not module.startswith(owning + "."):
                    yield f"{module} imports {target} (line {node.lineno})"
                break


def python_files() -> Iterator[Path]:
    yield from sorted((SOURCE / "sopbench").rglob("*.py"))
    yield from sorted((ROOT / "benchmarks").rglob("*.py"))


def test_no_module_imports_a_private_part_of_another_package() -> None:
    found = [
        problem
        for path in python_files()
        for problem in private_imports(module_name(path), path.read_text(), path.name == "__init__.py")
    ]
    assert found == []


@pytest.mark.parametrize(
    ("module", "source", "bad"),
    [
        ("sopbench.scoring._engine", "from sopbench.domains._derive import simplify", True),
        ("sopbench.scoring._engine", "from sopbench.domains import _derive", True),
        ("sopbench.scoring._engine", "import sopbench.traces._load", True),
        ("sopbench.runner._loop", "from sopbench.scoring._engine import score_calls", True),
        ("benchmarks.score_all", "from sopbench.scoring import _engine", True),
        ("benchmarks.score_all", "from sopbench._io import read_json", True),
        ("sopbench.scoring._engine", "from ._calls import ScoredCall", False),
        ("sopbench.scoring._engine", "from sopbench.scoring._calls import ScoredCall", False),
        ("sopbench.domains.bank.tools", "from sopbench.domains._mechanism import parse_time", False),
        ("sopbench.traces._load", "from sopbench._io import read_json", False),
        ("sopbench.scoring._engine", "from sopbench.domains import task_oracle", False),
    ],
)
def test_the_private_import_check_tells_cross_package_imports_apart(
    module: str, source: str, bad: bool
) -> None:
    assert bool(list(private_imports(module, source))) is bad
