"""The README's "Guard your own agent" example runs and prints what it says."""

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_guard_your_own_agent_snippet_runs():
    section = README.read_text().split("## Guard your own agent", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(code.strip().splitlines()) <= 22
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    lines = out.getvalue().splitlines()
    assert lines == ['"verify_identity(user=alice)" (verify with verify_identity(user=alice))', "True"]
