"""The probes of issue 10: bad inputs and outputs given to each verb; prints a markdown table of
exit codes and the first line of what each printed (stderr first).

    .venv/bin/python benchmarks/cli_probes.py .                # this checkout
    .venv/bin/python benchmarks/cli_probes.py . OTHER/src      # another version of the sources

Small synthetic trajectory and task files are built in a temporary folder; the Ctrl-C probe and
the leaderboard probe also use ../shared/sopbench when it is there. The read-only probe writes
under /sys, which refuses new files even to root. Not a timing script.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(sys.argv[1]).resolve()
SHARED = REPO.parent / "shared" / "sopbench"
PY = str(REPO / ".venv" / "bin" / "python")
SRC = sys.argv[2] if len(sys.argv) > 2 else str(REPO / "src")
EXE_ARGS = [PY, "-m", "sopbench.cli"]
sys.path.insert(0, str(REPO / "tests"))
from conftest import synthetic_record  # noqa: E402

NAME = "ast_gpt-4o-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"
work = Path(tempfile.mkdtemp())
os.chdir(work)
env = {**os.environ, "COLUMNS": "80", "TERM": "dumb", "PYTHONPATH": SRC}


def write(path, data):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


good = write(f"t/bank/{NAME}", [synthetic_record(), synthetic_record()])
write(f"expA/bank/{NAME}", [synthetic_record()])
bad = synthetic_record()
bad["interactions"] = []
write(f"expB/bank/{NAME}", [bad, synthetic_record()])
Path("empty").mkdir()
write("broken/bank/" + NAME, "{not json")
write("notgz/bank/" + NAME + ".gz", "[]")
write("tasks_empty/bank_tasks.json", {})
write("tasks_bad/bank_tasks.json", "{broken")
write("cards_banana.csv", f"file,credit_cards_as_when_scored\n{NAME},banana\n")
write("cards_bad.csv", "nope\n")
Path("adir").mkdir()


def run(args, stdin=None):
    p = subprocess.run([*EXE_ARGS, *args], capture_output=True, text=True, env=env)
    return p


def first(text):
    lines = [
        line.replace(NAME, "X.json").replace(str(work) + "/", "").replace(str(SHARED), "../shared/sopbench")
        for line in text.strip().splitlines()
        if line.strip()
    ]
    return (lines[0][:120] + (f" (+{len(lines) - 1} lines)" if len(lines) > 1 else "")) if lines else ""


rows = []


def probe(label, args, check=None, setup=None):
    if setup:
        setup()
    p = run(args)
    note = check(p) if check else ""
    msg = first(p.stderr) or first(p.stdout)
    rows.append((label, "sopbench " + " ".join(args), p.returncode, (note + " | " if note else "") + msg))


def reset_out(text="OLD\n"):
    write("out.jsonl", text)


probe(
    "self-overwrite",
    ["evaluate", str(good), "-o", str(good)],
    lambda p: f"input now {good.stat().st_size} bytes",
)
good = write(f"t/bank/{NAME}", [synthetic_record(), synthetic_record()])
probe(
    "self-overwrite, another spelling",
    ["evaluate", "t", "-o", "t/bank/../bank/" + NAME],
    lambda p: f"input now {good.stat().st_size} bytes",
)
good = write(f"t/bank/{NAME}", [synthetic_record(), synthetic_record()])
Path("link.json").symlink_to(good)
probe(
    "self-overwrite through a symlink",
    ["evaluate", "t", "-o", "link.json"],
    lambda p: f"input now {good.stat().st_size} bytes",
)
Path("link.json").unlink()
good = write(f"t/bank/{NAME}", [synthetic_record(), synthetic_record()])
probe(
    "bad --bank-cards file keeps output",
    ["evaluate", "t", "--bank-cards", "cards_bad.csv", "-o", "out.jsonl"],
    lambda p: f"out.jsonl={Path('out.jsonl').read_text()!r}",
    setup=reset_out,
)
probe("--bank-cards value banana", ["evaluate", "t", "--bank-cards", "cards_banana.csv", "-o", "out.jsonl"])
probe("empty folder", ["evaluate", "empty", "-o", "out.jsonl"])
probe("only broken files", ["evaluate", "broken", "-o", "out.jsonl"])
probe("not gzip", ["evaluate", "notgz", "-o", "out.jsonl"])
probe("diagnose on task file {}", ["diagnose", "--tasks", "bank", "--tasks-dir", "tasks_empty"])
probe("output in missing folder", ["evaluate", "t", "-o", "missing/out.jsonl"])
probe("output in read-only place", ["evaluate", "t", "-o", "/sys/out.jsonl"])
probe("output is a directory", ["evaluate", "t", "-o", "adir"])
probe("diagnose bad task file", ["diagnose", "--tasks", "bank", "--tasks-dir", "tasks_bad"])
probe("leaderboard bad task file", ["leaderboard", "t", "--tasks-dir", "tasks_bad"])
probe(
    "evaluate table piped",
    ["evaluate", "t", "expA", "-o", "out.jsonl"],
    lambda p: "truncated (…)" if "…" in p.stdout else "full width",
)
probe(
    "-o -",
    ["evaluate", "t", "-o", "-"],
    lambda p: f"file '-' exists: {Path('-').exists()}; stdout lines {len(p.stdout.splitlines())}",
)
probe("replay -o -", ["replay", "t", "-o", "-"], lambda p: f"file '-' exists: {Path('-').exists()}")
Path("-").unlink(missing_ok=True)


def docs(p):
    dec = json.JSONDecoder()
    s = p.stdout.strip()
    n = 0
    i = 0
    try:
        while i < len(s):
            _, j = dec.raw_decode(s, i)
            n += 1
            i = j
            while i < len(s) and s[i].isspace():
                i += 1
        return f"{n} JSON document(s)"
    except ValueError:
        return f"{n} JSON document(s) then non-JSON"


probe(
    "--compare --format json",
    ["leaderboard", "t", "--tasks-dir", "tasks_empty", "--compare", "--format", "json"],
    docs,
)
probe(
    "--compare --format csv",
    ["leaderboard", "t", "--tasks-dir", "tasks_empty", "--compare", "--format", "csv"],
    lambda p: (
        "rich table in CSV" if ("━" in p.stdout or "┃" in p.stdout or "sound vs" in p.stdout) else "CSV only"
    ),
)
probe(
    "expA/expB same file name",
    ["leaderboard", "expA", "expB", "--tasks-dir", "tasks_empty", "--format", "json"],
    lambda p: (
        (lambda rows: f"{len([r for r in rows if r['model'] != 'refuse-all'])} model row(s)")(
            json.loads(p.stdout)
        )
        if p.stdout.strip().startswith("[")
        else "?"
    ),
)
probe(
    "record without trajectory (replay)",
    ["replay", "expB", "-o", "out.jsonl"],
    lambda p: (
        "named"
        if "no trajectory" in (p.stderr + p.stdout) or "without" in (p.stderr + p.stdout)
        else "not named"
    ),
)
probe(
    "--problems on leaderboard",
    ["leaderboard", "broken", "--problems", "problems.txt", "--tasks-dir", "tasks_empty"],
)
probe("--bank-cards not a file", ["evaluate", "t", "--bank-cards", "nowhere.csv", "-o", "out.jsonl"])
probe("unknown --format", ["leaderboard", "t", "--format", "xml"])
probe("unknown quirk", ["evaluate", "t", "--quirk", "nope", "-o", "out.jsonl"])
probe("missing input", ["evaluate", "nowhere", "-o", "out.jsonl"])
probe(
    "records without trajectory (evaluate)",
    ["evaluate", "expB", "-o", "out.jsonl"],
    lambda p: (
        "named"
        if "record 0" in (p.stderr + p.stdout) or "records 0" in (p.stderr + p.stdout)
        else "not named"
    ),
)
probe("-o - with --json", ["evaluate", "t", "-o", "-", "--json"])
probe(
    "leaderboard one-case row",
    ["leaderboard", "expA", "--tasks-dir", "tasks_empty", "--format", "json"],
    lambda p: (
        (
            lambda d: (
                "below_min_cases=" + str([r.get("below_min_cases") for r in d if r["model"] != "refuse-all"])
            )
        )(json.loads(p.stdout))
        if p.stdout.strip().startswith("[")
        else "?"
    ),
)
probe("good input", ["evaluate", "t", "-o", "out.jsonl"])


def helpcheck(p):
    too_long = any(len(line) > 80 for line in p.stdout.splitlines())
    return (
        ("truncated names" if "…" in p.stdout else "no truncation")
        + (", lines over 80 columns" if too_long else "")
        + (", Python types" if any(t in p.stdout for t in ("<list[", "<path>", "<str>", "<int>")) else "")
        + (", quirks listed" if "session_before_credentials" in p.stdout else ", quirks not listed")
    )


probe("evaluate --help at 80 cols", ["evaluate", "--help"], helpcheck)
probe("leaderboard --help at 80 cols", ["leaderboard", "--help"], helpcheck)
probe("quirks verb", ["quirks"])
probe("--debug", ["--debug", "evaluate", "t", "-o", "missing/out.jsonl"])

# Ctrl-C in the middle of a long evaluate (published data)
if SHARED.exists():
    write("big.jsonl", "OLD\n")
    p = subprocess.Popen(
        [*EXE_ARGS, "evaluate", str(SHARED / "trajectories"), "-o", "big.jsonl"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    time.sleep(2)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate()
    leftovers = [x.name for x in work.iterdir() if x.name.startswith(".big") or "tmp" in x.name]
    state = (
        "unchanged"
        if Path("big.jsonl").read_text() == "OLD\n"
        else f"REPLACED ({Path('big.jsonl').stat().st_size} bytes)"
    )
    rows.append(
        (
            "Ctrl-C during evaluate",
            "sopbench evaluate <published trajectories> -o big.jsonl; SIGINT after 2 s",
            p.returncode,
            f"big.jsonl {state}; temp files left: {leftovers} | " + first(err),
        )
    )
    t0 = time.time()
    p = subprocess.run(
        [
            *EXE_ARGS,
            "leaderboard",
            str(SHARED / "trajectories" / "university"),
            "--tasks-dir",
            str(SHARED / "tasks"),
            "--min-cases",
            "20",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    rows.append(
        (
            "leaderboard --min-cases",
            "sopbench leaderboard <university> --min-cases 20",
            p.returncode,
            first(p.stderr) or first(p.stdout),
        )
    )

print("| probe | command | exit | message / observation |")
print("|---|---|---|---|")
for label, cmd, rc, msg in rows:
    cmd = cmd.replace(str(SHARED), "../shared/sopbench")
    cmd = cmd.replace(NAME, "X.json")
    msg = (
        msg.replace(NAME, "X.json")
        .replace("|", "\\|")
        .replace(str(work) + "/", "")
        .replace(str(SHARED), "../shared/sopbench")
    )
    print(f"| {label} | `{cmd}` | {rc} | {msg} |")
shutil.rmtree(work, ignore_errors=True)
