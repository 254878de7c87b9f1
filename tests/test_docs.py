"""The README and docs/ name files and code that exist: every Python file path they give is there,
and every name they pin to a file (`` `path` (`name`) `` or `` `name` (`path`) ``) is defined in it."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "sopbench"
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

PATH = r"[A-Za-z0-9_]+(?:/[A-Za-z0-9_]+)+\.py"  # at least one folder: a bare `tools.py` names no file
NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?"
PATH_THEN_NAMES = re.compile(rf"`({PATH})`\s*\(((?:`{NAME}`(?:,\s*|\s+and\s+)?)+)\)")
NAME_THEN_PATH = re.compile(rf"`({NAME})`\s*\(`({PATH})`\)")


def resolve(path: str) -> Path | None:
    """The file a documented path names: from the repository root (``src/...``, ``tests/...``,
    ``benchmarks/...``), else inside the package (``scoring/_engine.py``); None for paths outside the
    project (an example package of docs/custom-domain.md)."""
    first = path.split("/", 1)[0]
    if first in ("src", "tests", "benchmarks"):
        return ROOT / path
    if first == "sopbench":
        return PACKAGE.parent / path
    if (PACKAGE / first).is_dir():
        return PACKAGE / path
    return None


@cache
def defined_names(file: Path) -> dict[str, set[str]]:
    """Top-level names of a module (functions, classes, assignments, imports), each with the names
    its class body defines."""
    names: dict[str, set[str]] = {}
    for node in ast.parse(file.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names[node.name] = set()
        elif isinstance(node, ast.ClassDef):
            members = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    members.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    members.add(item.target.id)
                elif isinstance(item, ast.Assign):
                    members.update(t.id for t in item.targets if isinstance(t, ast.Name))
            names[node.name] = members
        elif isinstance(node, ast.Assign):
            names.update((t.id, set()) for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = set()
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update((alias.asname or alias.name.split(".")[0], set()) for alias in node.names)
    return names


def defines(file: Path, name: str) -> bool:
    top, _, member = name.partition(".")
    names = defined_names(file)
    return top in names and (not member or member in names[top])


def references(document: Path) -> list[tuple[int, str, list[str]]]:
    """(line, path, names pinned to it) for every Python file path the document gives."""
    found = []
    for number, line in enumerate(document.read_text().splitlines(), start=1):
        pinned: dict[str, list[str]] = {path: [] for path in re.findall(rf"`({PATH})`", line)}
        for path, names in PATH_THEN_NAMES.findall(line):
            pinned[path] += re.findall(rf"`({NAME})`", names)
        for name, path in NAME_THEN_PATH.findall(line):
            pinned[path].append(name)
        found += [(number, path, names) for path, names in pinned.items()]
    return found


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: d.name)
def test_every_file_and_name_a_document_gives_exists(document: Path) -> None:
    problems = []
    for number, path, names in references(document):
        file = resolve(path)
        if file is None:
            continue
        if not file.is_file():
            problems.append(f"{document.name}:{number}: {path} does not exist")
            continue
        problems += [
            f"{document.name}:{number}: {path} does not define {name}"
            for name in names
            if not defines(file, name)
        ]
    assert problems == []


def test_the_documents_pin_names_to_files() -> None:
    """The check has something to check: the README's "decided in" table alone pins nine names."""
    pinned = [name for number, path, names in references(ROOT / "README.md") for name in names]
    assert len(pinned) >= 9
    assert "judge_goal_permission" in pinned


@pytest.mark.parametrize(
    ("line", "path", "names"),
    [
        (
            "| x | `src/sopbench/scoring/_engine.py` (`_score`) |",
            "src/sopbench/scoring/_engine.py",
            ["_score"],
        ),
        ("`a/b.py` (`one`, `Two.three`)", "a/b.py", ["one", "Two.three"]),
        ("calls `score_run` (`scoring/_api.py`), which", "scoring/_api.py", ["score_run"]),
        ("the fast paths in `traces/_fast.py`, the", "traces/_fast.py", []),
    ],
)
def test_references_are_read_with_the_names_beside_them(
    tmp_path: Path, line: str, path: str, names: list[str]
) -> None:
    document = tmp_path / "doc.md"
    document.write_text(line + "\n")
    assert references(document) == [(1, path, names)]


def test_a_wrong_name_or_path_is_reported(tmp_path: Path) -> None:
    engine = PACKAGE / "scoring" / "_engine.py"
    assert defines(engine, "score_calls")
    assert not defines(engine, "score_episode")  # it lives in scoring/_episode.py
    assert defines(PACKAGE / "evaluation" / "_model.py", "Verdict.passed")
    assert not defines(PACKAGE / "evaluation" / "_model.py", "Verdict.success")
    assert resolve("scoring/_nowhere.py") is not None and not resolve("scoring/_nowhere.py").is_file()


DOTTED = re.compile(r"(\bimport\s+)?`(sopbench(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")


def resolves(dotted: str, *, module: bool) -> bool:
    """A module, or (unless ``module``: the text says to import it) a name reached from the longest
    importable module prefix."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0 if not module else len(parts) - 1, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError as exc:
            if exc.name is not None and not exc.name.startswith("sopbench"):
                pytest.skip(f"{dotted} needs {exc.name}, not installed")
            continue
        except ImportError as exc:
            skip_for_a_missing_extra(dotted, exc)
        for attribute in parts[cut:]:
            try:
                if not hasattr(value, attribute):
                    return False
            except ImportError as exc:  # a lazily loaded name of an optional extra's package
                skip_for_a_missing_extra(dotted, exc)
            value = getattr(value, attribute)
        return True
    return False


def skip_for_a_missing_extra(dotted: str, exc: ImportError) -> None:
    """A package of an optional extra says which extra it needs (its ImportError caused by the extra's
    missing module): skip; any other import error is the document's or the code's and is raised."""
    missing = exc.__cause__ or exc.__context__
    if isinstance(missing, ImportError) and missing.name and not missing.name.startswith("sopbench"):
        pytest.skip(f"{dotted} needs {missing.name}, not installed")
    raise exc


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: d.name)
def test_every_dotted_name_a_document_gives_resolves(document: Path) -> None:
    """`` `sopbench.x.y` ``: a module, or what a module defines (the README once named a module
    ``sopbench.inspect_eval.reference_model`` that does not exist: it is a name in a package)."""
    text = document.read_text()
    wrong = [
        f"{document.name}:{text.count(chr(10), 0, match.start(2)) + 1}: {match[2]}"
        for match in DOTTED.finditer(text)  # over the whole text: "import" may end the line before
        if not resolves(match[2], module=bool(match[1]))
    ]
    assert not wrong, "names that do not exist: " + "; ".join(wrong)
