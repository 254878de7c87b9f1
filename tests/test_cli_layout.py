"""The command line stays thin: each verb (a function registered with ``@verb``) parses its options
and calls one library function, so its body, after the signature and the help text, is short."""

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[1] / "src" / "sopbench" / "cli"
LONGEST_BODY = 45  # lines; the signature (one line per option) and the help text are not counted


def verb_bodies(source: str) -> dict[str, int]:
    """Verb name -> lines of its body (the docstring left out)."""
    bodies = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        if not any(
            isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id == "verb"
            for d in node.decorator_list
        ):
            continue
        statements = node.body[1:] if ast.get_docstring(node) is not None else node.body
        bodies[node.name] = node.end_lineno - statements[0].lineno + 1
    return bodies


def test_every_verb_body_is_short():
    bodies = {
        name: lines
        for module in sorted(CLI.glob("*.py"))
        for name, lines in verb_bodies(module.read_text()).items()
    }
    assert (
        len(bodies) == 19
    )  # every verb of `sopbench --help` (data fetch, local build, mcp serve, guard proxy, cache info and clear included)
    assert {name: lines for name, lines in bodies.items() if lines > LONGEST_BODY} == {}


def test_a_long_verb_is_caught():
    body = "\n".join(f"    x{i} = {i}" for i in range(LONGEST_BODY + 1))
    source = f'@verb(app)\ndef run() -> None:\n    """Help."""\n{body}\n'
    assert verb_bodies(source) == {"run": LONGEST_BODY + 1}
    assert verb_bodies(source.replace("@verb(app)\n", "")) == {}
