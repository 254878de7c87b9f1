"""The package boundaries hold, and the checks that say so bite.

- The layering (import-linter contracts in pyproject.toml): kept by the real tree; broken by a scratch
  import of each forbidden kind written into a copy of it; and every package and top-level module of
  sopbench sits in a layer (a module in none would escape the contract).
- The domains' independence (another contract there): no domain imports another, directly or through
  a shared module; every domain package is in the contract.
- No module imports a private module or name of another package (src/, benchmarks/ and tests/; a test
  file is a user of every package except the one it mirrors: tests/scoring/ of ``sopbench.scoring``,
  tests/test_io.py of ``sopbench._io``).
- No test imports a private module or name at all, of the package it mirrors included (a name a test
  needs is a missing public one); the few exceptions are listed by name with their reason.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src"
TESTS = ROOT / "tests"
CONFIG = ROOT / "pyproject.toml"


def lint_imports(source_root: Path = SOURCE, config: Path = CONFIG) -> subprocess.CompletedProcess[str]:
    """import-linter over the ``sopbench`` found in ``source_root``, in a child process (it reconfigures
    logging, which would silence other tests' loggers)."""
    program = (
        f"import sys; sys.path.insert(0, {str(source_root)!r}); "
        "from importlinter.cli import lint_imports; "
        f"sys.exit(lint_imports(config_filename={str(config)!r}, no_cache=True, no_logo=True))"
    )
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=False)


def test_import_linter_contracts_are_kept() -> None:
    pytest.importorskip("importlinter")
    result = lint_imports()
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


def layered_modules(config: Path = CONFIG) -> list[str]:
    """Every module named in a layer of the layers contract (``a | b`` and ``a : b`` split)."""
    contracts = tomllib.loads(config.read_text())["tool"]["importlinter"]["contracts"]
    names = []
    for contract in contracts:
        if contract["type"] != "layers" or contract.get("containers"):  # layers inside one package
            continue
        for layer in contract["layers"]:
            names += [name.strip() for part in layer.split("|") for name in part.split(":")]
    return names


def top_level_modules(package_dir: Path) -> list[str]:
    """``sopbench.X`` for every sub-package and module of the package (its ``__init__`` aside)."""
    found = []
    for entry in sorted(package_dir.iterdir()):
        if entry.is_dir() and (entry / "__init__.py").exists():
            found.append(f"sopbench.{entry.name}")
        elif entry.suffix == ".py" and entry.name != "__init__.py":
            found.append(f"sopbench.{entry.stem}")
    return found


def unlayered(package_dir: Path, config: Path = CONFIG) -> list[str]:
    layered = layered_modules(config)
    return [module for module in top_level_modules(package_dir) if module not in layered]


def test_every_package_and_top_level_module_is_in_a_layer() -> None:
    assert unlayered(SOURCE / "sopbench") == []
    layered = layered_modules()
    assert len(layered) == len(set(layered)), "a module sits in two layers"
    assert set(layered) <= set(top_level_modules(SOURCE / "sopbench")), "a layer names no module"


def top_layers(config: Path = CONFIG) -> list[list[str]]:
    """The layers of the package-wide layers contract, top first, each as its packages."""
    contracts = tomllib.loads(config.read_text())["tool"]["importlinter"]["contracts"]
    (layers,) = [c["layers"] for c in contracts if c["type"] == "layers" and not c.get("containers")]
    return [[name.strip() for name in layer.split("|")] for layer in layers]


def documented_layers(document: Path = ROOT / "docs" / "architecture.md") -> list[list[str]]:
    """The packages of each row of docs/architecture.md's layer table, top first."""
    text = document.read_text()
    table = text[text.index("| layer | package |") :].split("\n\n", 1)[0].splitlines()[2:]
    return [re.findall(r"`(sopbench\.[A-Za-z_]+)`", row.split("|")[2]) for row in table]


def layer_table_problems(layers: list[list[str]], rows: list[list[str]]) -> list[str]:
    """How a documented layer table disagrees with the contract: a package missing or extra, one
    contract layer split over two rows, or rows out of the contract's order."""
    row_of = {package: index for index, row in enumerate(rows) for package in row}
    contract = [package for layer in layers for package in layer]
    problems = [f"{p} is not in the table" for p in contract if p not in row_of]
    problems += [f"{p} is in the table but in no layer" for p in row_of if p not in contract]
    last = -1
    for layer in layers:
        placed = {row_of[p] for p in layer if p in row_of}
        if len(placed) > 1:
            problems.append(f"the layer {' | '.join(layer)} is split over rows")
        if placed and min(placed) < last:
            problems.append(f"the layer {' | '.join(layer)} is above a layer the contract puts over it")
        last = max(placed, default=last)
    return problems


def test_the_documented_layer_table_is_the_contract() -> None:
    assert layer_table_problems(top_layers(), documented_layers()) == []


def test_a_layer_table_out_of_order_or_missing_a_package_is_told() -> None:
    layers = [["sopbench.cli"], ["sopbench.sweep", "sopbench.report"], ["sopbench.runner"]]
    assert (
        layer_table_problems(
            layers, [["sopbench.cli"], ["sopbench.sweep", "sopbench.report"], ["sopbench.runner"]]
        )
        == []
    )
    assert layer_table_problems(
        layers, [["sopbench.cli"], ["sopbench.runner"], ["sopbench.sweep", "sopbench.report"]]
    )
    assert layer_table_problems(
        layers, [["sopbench.cli"], ["sopbench.sweep"], ["sopbench.report"], ["sopbench.runner"]]
    )
    assert layer_table_problems(layers, [["sopbench.cli"], ["sopbench.sweep", "sopbench.report"]]) == [
        "sopbench.runner is not in the table"
    ]


def independent_domains(config: Path = CONFIG) -> list[str]:
    """The modules of the independence contract over ``sopbench.domains``' sub-packages."""
    contracts = tomllib.loads(config.read_text())["tool"]["importlinter"]["contracts"]
    return [
        module
        for contract in contracts
        if contract["type"] == "independence"
        for module in contract["modules"]
        if module.startswith("sopbench.domains.")
    ]


def test_every_domain_package_is_independent_of_the_others() -> None:
    """A domain added without joining the contract could import the others unchecked."""
    packages = [
        f"sopbench.domains.{entry.name}"
        for entry in sorted((SOURCE / "sopbench" / "domains").iterdir())
        if entry.is_dir() and (entry / "__init__.py").exists()
    ]
    assert len(packages) >= 7
    assert sorted(independent_domains()) == packages


@pytest.fixture(scope="module")
def scratch_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of src/ (``sopbench`` only) to write forbidden imports into."""
    root = tmp_path_factory.mktemp("scratch_src")
    shutil.copytree(SOURCE / "sopbench", root / "sopbench", ignore=shutil.ignore_patterns("__pycache__"))
    return root


# Each kind of import the contracts forbid: (the scratch module, its source).
FORBIDDEN = {
    "upward: tasks imports scoring": [("tasks/_scratch.py", "import sopbench.scoring\n")],
    "upward: scoring imports the command-line contract": [
        ("scoring/_scratch.py", "from sopbench.cli import _contract\n")
    ],
    "upward: report imports the command line": [("report/_scratch.py", "import sopbench.cli\n")],
    "upward: results imports report": [("results/_scratch.py", "from sopbench.report import TextTable\n")],
    "siblings: sweep imports report (its leaderboard comes from results)": [
        ("sweep/_scratch.py", "import sopbench.report\n")
    ],
    "siblings: report imports sweep": [("report/_scratch.py", "import sopbench.sweep\n")],
    "siblings: results imports the viewer": [("results/_scratch.py", "import sopbench.view\n")],
    "siblings: scoring imports agents": [("scoring/_scratch.py", "from sopbench.agents import Agent\n")],
    "siblings: agents imports scoring": [("agents/_scratch.py", "import sopbench.scoring\n")],
    "siblings: traces imports domains": [("traces/_scratch.py", "import sopbench.domains\n")],
    # replay.py is a module, not a package: the scratch import goes at its end.
    "siblings: replay imports diagnosis": [("replay.py", "\nimport sopbench.diagnosis\n")],
    "siblings: generation imports replay": [("generation/_scratch.py", "import sopbench.replay\n")],
    "core: constraints imports domains": [("constraints/_scratch.py", "import sopbench.domains\n")],
    "core: evaluation imports the file helpers": [("evaluation/_scratch.py", "from sopbench import _io\n")],
    "guard: a session imports the guard back": [
        ("guard/_session.py", "\nfrom sopbench.guard import _guard\n")
    ],
    "guard: a wrapper imports the guard back": [("guard/_wrap.py", "\nfrom . import _guard\n")],
    "domains: bank imports hotel": [("domains/bank/_scratch.py", "import sopbench.domains.hotel\n")],
    "domains: hotel imports a part of bank, relatively": [
        ("domains/hotel/_scratch.py", "from ..bank import state\n")
    ],
    "domains: bank reaches hotel through a shared module of sopbench.domains": [
        ("domains/_scratch.py", "import sopbench.domains.hotel.tools\n"),
        ("domains/bank/_scratch.py", "from sopbench.domains import _scratch\n"),
    ],
    "outside any layer: scoring reaches agents through an unlayered module": [
        ("_scratch.py", "import sopbench.agents\n"),
        ("scoring/_scratch.py", "import sopbench._scratch\n"),
    ],
}


@pytest.mark.parametrize("kind", list(FORBIDDEN))
def test_lint_imports_fails_on_each_forbidden_kind_of_import(scratch_tree: Path, kind: str) -> None:
    pytest.importorskip("importlinter")
    package = scratch_tree / "sopbench"
    originals: dict[Path, str | None] = {}
    try:
        for relative, text in FORBIDDEN[kind]:
            path = package / relative
            originals[path] = path.read_text() if path.exists() else None
            path.write_text((originals[path] or "") + text)
        result = lint_imports(scratch_tree)
    finally:
        for path, original in originals.items():
            if original is None:
                path.unlink()
            else:
                path.write_text(original)
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-2000:]
    assert "BROKEN" in result.stdout


def test_the_scratch_tree_passes_once_the_scratch_imports_are_gone(scratch_tree: Path) -> None:
    """The copy itself is clean: each failure above is the scratch import's doing."""
    pytest.importorskip("importlinter")
    result = lint_imports(scratch_tree)
    assert result.returncode == 0, result.stdout[-3000:]


def test_a_module_outside_every_layer_is_reported(scratch_tree: Path) -> None:
    # On its own an unlayered module importing upward breaks no contract: the layer check catches it.
    stray = scratch_tree / "sopbench" / "_stray.py"
    stray.write_text("import sopbench.cli\n")
    try:
        assert unlayered(scratch_tree / "sopbench") == ["sopbench._stray"]
    finally:
        stray.unlink()


def module_name(path: Path) -> str:
    """``sopbench.scoring._engine`` for src/sopbench/scoring/_engine.py (benchmarks: ``benchmarks.x``,
    tests: ``tests.scoring.test_engine``)."""
    base = SOURCE if path.is_relative_to(SOURCE) else ROOT
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def mirrored(path: Path) -> str | None:
    """What a test file tests, and so may reach inside: tests/scoring/... ``sopbench.scoring``,
    tests/test_io.py ``sopbench._io``, tests/test_replay.py ``sopbench.replay``; None elsewhere."""
    if not path.is_relative_to(TESTS):
        return None
    parts = path.relative_to(TESTS).with_suffix("").parts
    if len(parts) > 1:
        return f"sopbench.{parts[0]}"
    target = parts[0].removeprefix("test_")
    for name in (target, f"_{target}"):
        if (SOURCE / "sopbench" / name).is_dir() or (SOURCE / "sopbench" / f"{name}.py").exists():
            return f"sopbench.{name}"
    return None


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def is_private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def private_imports(
    module: str, source: str, is_package: bool = False, mirrors: str | None = None
) -> Iterator[str]:
    """Every import in ``source`` (the text of ``module``) of a private module or name of another
    package: ``sopbench.X._y`` or ``from sopbench.X import _y`` from outside ``sopbench.X``.

    A private part is private to the package that holds it: the root package's own modules
    (``sopbench._io``) are shared by every package inside it, never by benchmarks or tests. A test
    (``mirrors``: what it tests) uses the public names of every other package, like any user.
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
                if mirrors is not None:
                    allowed = within(owning, mirrors) or within(".".join(parts[: depth + 1]), mirrors)
                else:
                    allowed = within(module, owning)
                if not allowed:
                    yield f"{module} imports {target} (line {node.lineno})"
                break


def python_files() -> Iterator[Path]:
    yield from sorted((SOURCE / "sopbench").rglob("*.py"))
    yield from sorted((ROOT / "benchmarks").rglob("*.py"))
    yield from sorted(TESTS.rglob("*.py"))


def test_no_module_imports_a_private_part_of_another_package() -> None:
    found = [
        problem
        for path in python_files()
        for problem in private_imports(
            module_name(path), path.read_text(), path.name == "__init__.py", mirrored(path)
        )
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


@pytest.mark.parametrize(
    ("test_file", "source", "bad"),
    [
        ("scoring/test_quirks.py", "from sopbench.domains._derive import expand", True),
        ("tasks/test_load.py", "from sopbench._io import read_json", True),
        ("scoring/test_fuzz.py", "from sopbench import _io", True),
        ("test_leaderboard.py", "from sopbench.report._leaderboard import x", True),
        ("test_leaderboard.py", "from sopbench.cli._contract import verb", True),
        ("runner/test_run_cli.py", "from sopbench.cli import _options", True),
        ("scoring/test_pyeval.py", "from sopbench.scoring._pyeval import python_value", False),
        ("test_io.py", "from sopbench._io import read_json", False),
        ("test_replay.py", "from sopbench.replay import replay_file", False),
        ("scoring/test_quirks.py", "from sopbench.domains import expand", False),
    ],
)
def test_a_test_uses_only_the_public_names_of_packages_it_does_not_test(
    test_file: str, source: str, bad: bool
) -> None:
    path = TESTS / test_file
    found = list(private_imports(module_name(path), source, mirrors=mirrored(path)))
    assert bool(found) is bad


def private_parts_of_test(source: str) -> Iterator[tuple[int, str]]:
    """Every import in a test's ``source`` of a private part of sopbench, as (line, what): a module path
    ``sopbench.x._y`` (any component starting with ``_``, ``__init__`` and ``__main__`` aside) or a
    name ``from sopbench.x import _y``, wherever the import sits (in a function too)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            paths = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            paths = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for path in paths:
            parts = path.split(".")
            if parts[0] == "sopbench" and any(is_private(part) for part in parts[1:]):
                yield node.lineno, path
                break


# The private imports a test still makes, each by (test file, what it imports) and why; every other
# one fails the check below. Each says at the import why no public name serves.
PRIVATE_IMPORTS_OF_TESTS = {
    # The root package's own modules, tested in their own files: ``sopbench`` exports only its
    # version (its modules import sub-packages, which import ``sopbench`` first).
    ("tests/test_io.py", "sopbench._io"): "the file helpers every package shares",
    ("tests/test_json.py", "sopbench._json"): "the JSON bounds every package shares",
    ("tests/test_outputs.py", "sopbench._outputs"): "the output guard every package shares",
    # A private hook patched: no public function asks for what the patch gives.
    ("tests/generation/test_generate.py", "sopbench.generation._files"): (
        "the default task set built of one domain, not seven (minutes)"
    ),
    ("tests/report/test_plots.py", "sopbench.report._plots"): (
        "the figures' layout and crop swapped for matplotlib's own, to pin that they are the same"
    ),
}


def test_no_test_imports_a_private_module_or_name() -> None:
    """A test uses each package as a user does, its own package included: only the public API."""
    found = [
        (str(path.relative_to(ROOT)), line, target)
        for path in sorted(TESTS.rglob("*.py"))
        for line, target in private_parts_of_test(path.read_text())
    ]
    refused = [
        f"{file}:{line}: {target}"
        for file, line, target in found
        if (file, target) not in PRIVATE_IMPORTS_OF_TESTS
    ]
    assert not refused, "tests import private parts of sopbench:\n" + "\n".join(refused)
    unused = set(PRIVATE_IMPORTS_OF_TESTS) - {(file, target) for file, _, target in found}
    assert not unused, f"allowed private imports no test makes any more: {sorted(unused)}"


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("from sopbench.generation._backtrack import backtrack", ["sopbench.generation._backtrack"]),
        ("from sopbench.statistics import _paired", ["sopbench.statistics._paired"]),
        ("from sopbench.scoring import QUIRKS, _protocol", ["sopbench.scoring._protocol"]),
        ("import sopbench.generation._files as files", ["sopbench.generation._files"]),
        ("import sopbench._io", ["sopbench._io"]),
        ("def f():\n    from sopbench.report import _plots as plots\n", ["sopbench.report._plots"]),
        ("from sopbench.scoring import score_paths", []),
        ("from sopbench.runner.episode import episode_row", []),
        ("import sopbench.cli.__main__", []),
        ("from sopbench import __version__", []),
        ("from _pytest.monkeypatch import MonkeyPatch", []),
        ("code = 'from sopbench.report import _plots'", []),  # a string: changed by hand, not caught
    ],
)
def test_the_test_import_check_finds_each_form_of_private_import(source: str, found: list[str]) -> None:
    assert [target for _, target in private_parts_of_test(source)] == found
