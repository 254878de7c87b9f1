"""Inspect AI stays an optional extra: only ``sopbench.inspect_eval`` imports it, and sopbench (its
log detection included) works without it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from sopbench.inspect_eval import is_inspect_log

SOURCE = Path(__file__).resolve().parents[2] / "src" / "sopbench"


def _imports_inspect_ai(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        if any(name == "inspect_ai" or name.startswith("inspect_ai.") for name in names):
            return True
    return False


def test_only_the_inspect_package_imports_inspect_ai():
    outside = [
        str(path.relative_to(SOURCE))
        for path in SOURCE.rglob("*.py")
        if "inspect_eval" not in path.parts and _imports_inspect_ai(path)
    ]
    assert outside == []


def test_the_command_line_and_the_report_verbs_load_without_inspect_ai():
    # A meta-path hook makes inspect_ai unimportable, as when the extra is not installed.
    program = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'inspect_ai' or name.startswith('inspect_ai.'):\n"
        "            raise ImportError(name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import sopbench.cli, sopbench.report, sopbench.inspect_eval as ie\n"
        "try:\n"
        "    ie.sopbench\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "pip install 'sopbench[inspect]'" in result.stdout


def test_trajectory_files_are_not_taken_for_inspect_logs(tmp_path):
    trajectory = tmp_path / "bank_runs.json"
    trajectory.write_text('{"0": {"task": {}, "runs": []}}')
    assert not is_inspect_log(trajectory)
    fake = tmp_path / "x.eval"
    fake.write_text("not a zip")
    assert not is_inspect_log(fake)
