"""How many tokens the assistant's first request carries, per tool-call mode and domain.

For each task (the generated default set, or ``--tasks``) the system prompt is built exactly as
the ``openai`` agent builds it (``build_system_prompt``) with the full tool list. In ``fc`` the tool
schemas travel beside the prompt; they are counted as compact JSON, which is close to what servers
put into the model's context (each server's chat template adds its own wrapping: llama-cpp-python's
function-calling format, for one, escapes quotes, which adds more). ``react`` and ``act-only`` carry
the tools inside the prompt: counted with the published indented rendering and with
``--compact-tools``.

Tokens: with llama-cpp-python installed (the extra ``local-llm``), the tokenizer of the GGUF model
(``--model-path``, default the bundled SmolLM2-135M-Instruct); otherwise an approximation of one
token per 4 characters (``--approximate`` forces it), which is within about 15% for English prose
and JSON with BPE tokenizers of this size.

    python benchmarks/prompt_sizes.py [--tasks ../shared/sopbench/tasks] [--markdown]

Prints the table (median and largest per domain and mode) on stderr, or as Markdown on stdout
with ``--markdown``; ``--json`` prints one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import orjson

from sopbench.agents.openai import build_system_prompt
from sopbench.domains import PUBLISHED_DOMAINS
from sopbench.runner.episode import episode_setup
from sopbench.tasks import load_tasks, task_ids

CHARS_PER_TOKEN = 4.0
VARIANTS = (("fc", False), ("react", False), ("react", True), ("act-only", False), ("act-only", True))


def counter(model_path: Path | None, approximate: bool) -> tuple[Callable[[str], int], str]:
    if not approximate:
        try:
            from llama_cpp import Llama

            from sopbench.local import bundled_gguf
        except ImportError:
            pass
        else:
            gguf = model_path or bundled_gguf()
            vocab = Llama(model_path=str(gguf), vocab_only=True, verbose=False)
            return (lambda text: len(vocab.tokenize(text.encode(), add_bos=False, special=False))), gguf.name
    return (
        lambda text: round(len(text) / CHARS_PER_TOKEN)
    ), f"approximation: {CHARS_PER_TOKEN:g} characters per token"


def task_files(tasks: Path | None) -> dict[str, Path]:
    if tasks is None:
        from sopbench.generation import default_tasks_dir

        tasks = default_tasks_dir()
    found = {}
    for domain in PUBLISHED_DOMAINS:
        for suffix in (".json", ".json.gz"):
            path = tasks / f"{domain}_tasks{suffix}"
            if path.exists():
                found[domain] = path
                break
    return found


def measure(files: dict[str, Path], count: Callable[[str], int]) -> list[dict]:
    rows = []
    for domain, path in files.items():
        tasks = load_tasks(path)
        sizes: dict[str, list[int]] = {}
        for task, task_id in zip(tasks, task_ids(tasks), strict=True):
            setup = episode_setup(task, task_id, "full", seed=0, run=0)
            for mode, compact in VARIANTS:
                text = build_system_prompt(setup, mode, compact_tools=compact)
                if mode == "fc":
                    text += orjson.dumps([dict(tool) for tool in setup.tools]).decode()
                sizes.setdefault(f"{mode}{' compact' if compact else ''}", []).append(count(text))
        for variant, values in sizes.items():
            rows.append(
                {
                    "domain": domain,
                    "variant": variant,
                    "tasks": len(values),
                    "median": int(statistics.median(values)),
                    "max": max(values),
                }
            )
    return rows


def markdown(rows: list[dict], unit: str) -> str:
    variants = list(dict.fromkeys(row["variant"] for row in rows))
    lines = [
        f"prompt tokens of the first request, median / largest over the tasks ({unit})",
        "",
        "| domain | " + " | ".join(variants) + " |",
        "|---|" + "--:|" * len(variants),
    ]
    for domain in dict.fromkeys(row["domain"] for row in rows):
        cells = {row["variant"]: f"{row['median']} / {row['max']}" for row in rows if row["domain"] == domain}
        lines.append(f"| {domain} | " + " | ".join(cells[v] for v in variants) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tasks", type=Path, help="a folder of <domain>_tasks.json[.gz] (default: the generated set)"
    )
    parser.add_argument(
        "--model-path", type=Path, help="a GGUF whose tokenizer counts (default: the bundled one)"
    )
    parser.add_argument("--approximate", action="store_true", help="count 4 characters as one token")
    parser.add_argument("--markdown", action="store_true", help="the table as Markdown on stdout")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    args = parser.parse_args()
    count, unit = counter(args.model_path, args.approximate)
    rows = measure(task_files(args.tasks), count)
    table = markdown(rows, unit)
    if args.json:
        print(json.dumps({"tokenizer": unit, "rows": rows}, indent=2))
    elif args.markdown:
        print(table)
    else:
        print(table, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
