"""pandas and pyarrow stay an optional extra (``frames``): only ``sopbench.results._frames`` imports
them, and without them sopbench loads and the frame names say which extra to install."""

from __future__ import annotations

import ast
from pathlib import Path

from sopbench.results import EPISODE_COLUMNS

SOURCE = Path(__file__).resolve().parents[2] / "src" / "sopbench"
FRAMES = SOURCE / "results" / "_frames.py"


def imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_only_the_frames_module_imports_pandas_or_pyarrow():
    importing = sorted(
        path.relative_to(SOURCE).as_posix()
        for path in SOURCE.rglob("*.py")
        if imported_modules(path) & {"pandas", "pyarrow"}
    )
    assert importing == ["results/_frames.py"]


def test_without_the_extra_sopbench_loads_and_the_frames_name_it(without_frames):
    result = without_frames(
        "import sopbench.cli, sopbench.report, sopbench.results as results\n"
        "print(len(results.EPISODE_COLUMNS))\n"
        "for name in ('episodes_frame', 'configurations_frame', 'write_parquet'):\n"
        "    try:\n"
        "        getattr(results, name)\n"
        "    except ImportError as exc:\n"
        "        print(exc)\n"
    )
    assert result.returncode == 0, result.stderr
    count, *messages = result.stdout.splitlines()
    assert int(count) == len(EPISODE_COLUMNS)
    assert messages == [
        f"sopbench.results.{name} needs the frames extra: pip install 'sopbench[frames]'"
        for name in ("episodes_frame", "configurations_frame", "write_parquet")
    ]
