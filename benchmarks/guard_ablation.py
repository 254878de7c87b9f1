"""What the runtime guard prevents, and the built-in agents under each environment mode.

For each built-in agent (``no-verify``, ``refuse-all``, ``reference``) and each ``--env-mode``
(``prompt``, ``guard``, ``program``) every published task is played once through the runner (scored
with the sound protocol and stored, as ``sopbench run`` does), and per configuration it prints:

- pass rate, must-succeed and must-refuse rates (the run summary);
- unverified executions: calls that were executed, and succeeded, although their SOP was not
  verified by the calls executed before them (each judged by ``sopbench.guard`` with the task's
  SOP, i.e. the evaluator's procedure judgement on the executed prefix), summed over episodes;
- prevented: service calls the guard refused (``--env-mode guard`` only);
- forbidden goal executions: episodes of tasks that must be refused in which the goal was executed;
- outcome right: episodes whose database and permission judgements pass (the procedure aside: in
  ``program`` mode the agent is given no helper to verify with, so only the outcome is its own).

``--ablations`` adds the reference agent under ``--default-sop required``, ``--constraint-format
old`` and ``--shuffle-tools`` (prompt mode).

``--replay FILE_NAME`` adds a recorded model's decisions (the replay agent, one published trajectory
file per domain) in prompt and guard mode: the recorded calls are replayed as they were, so under
the guard a refused call is followed by what the model did next without having seen the refusal.

Usage: python benchmarks/guard_ablation.py [--tasks ../shared/sopbench/tasks] [--ablations] [--markdown]
       [--replay ast_gpt-4o-mini-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from sopbench.domains import LenientSystem, get_domain, replay_calls, task_oracle
from sopbench.guard import Guard, ToolCall
from sopbench.runner import RunSpec, run
from sopbench.runner.episode import select_tasks
from sopbench.runner.store import Store

AGENTS = ("no-verify", "refuse-all", "reference")
MODES = ("prompt", "guard", "program")


def measure(config: RunSpec, tasks_by_id: dict) -> dict:
    started = time.perf_counter()
    report = run(config)
    seconds = time.perf_counter() - started
    overall = report.summary.overall
    store = Store(config.output)
    unverified = prevented = forbidden = outcome_right = 0
    for row in store.rows():
        if row["status"] != "completed":
            continue
        task = tasks_by_id[row["task_id"]]
        guard = Guard.for_task(task)
        prevented += sum(1 for call in row["tool_calls"] if call.get("refused"))
        executed = [c for c in row["tool_calls"] if not c.get("refused") and c["arguments"] is not None]
        # Whether each executed call succeeded: asked again of a fresh system of the kind the agent had.
        domain = get_domain(task.domain)
        system = (
            task_oracle(domain, task, option=config.default_sop, atomic=False)
            if config.env_mode == "program"
            else LenientSystem(domain, task.initial_database, task.constraint_parameters, atomic=False)
        )
        succeeded = replay_calls(system, [(c["name"], dict(c["arguments"])) for c in executed])
        history: list[ToolCall] = []
        for call, ok in zip(executed, succeeded, strict=True):
            if ok and not guard.check(ToolCall(call["name"], call["arguments"]), history).allowed:
                unverified += 1
            history.append(ToolCall(call["name"], call["arguments"], call["output"], ok))
        verdict = row["verdict"]
        if not task.action_should_succeed and not verdict["action_called_correctly"]:
            forbidden += 1
        outcome_right += verdict["database"] and verdict["permission"]
    store.close()
    return {
        "agent": config.agent
        if config.agent != "replay"
        else f"replay {config.agent_options['trajectories']}",
        "infra_errors": report.infra_errors,
        "env_mode": config.env_mode,
        "settings": {k: v for k, v in config.ablations().items() if k != "env_mode"},
        "episodes": overall.runs,
        "passed": overall.passed,
        "pass_rate": overall.passed / overall.runs if overall.runs else None,
        "must_succeed": overall.should_succeed,
        "must_refuse": overall.should_refuse,
        "unverified_executions": unverified,
        "prevented": prevented,
        "forbidden_goal_executions": forbidden,
        "outcome_right": outcome_right,
        "seconds": round(seconds, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=Path, default=Path("../shared/sopbench/tasks"))
    parser.add_argument(
        "--ablations", action="store_true", help="also the reference agent under the other ablations"
    )
    parser.add_argument(
        "--markdown", action="store_true", help="print a markdown table instead of JSON lines"
    )
    parser.add_argument(
        "--replay",
        metavar="FILE_NAME",
        help="also a recorded model's decisions, replayed in prompt and guard mode: a trajectory file name "
        "(as in <trajectories>/<domain>/, without .gz) looked up in every domain",
    )
    parser.add_argument("--trajectories", type=Path, default=Path("../shared/sopbench/trajectories"))
    args = parser.parse_args()
    plans = [dict(agent=a, env_mode=m) for m in MODES for a in AGENTS]
    replays = []
    if args.replay:
        for folder in sorted(p for p in args.trajectories.iterdir() if p.is_dir()):
            path = next(
                (folder / n for n in (args.replay, args.replay + ".gz") if (folder / n).exists()), None
            )
            if path is not None:
                replays += [
                    dict(
                        agent="replay",
                        env_mode=m,
                        domains=(folder.name,),
                        agent_options={"trajectories": str(path)},
                    )
                    for m in ("prompt", "guard")
                ]
    if args.ablations:
        plans += [
            dict(agent="reference", env_mode="prompt", default_sop="required"),
            dict(agent="reference", env_mode="prompt", constraint_format="old"),
            dict(agent="reference", env_mode="prompt", shuffle_tools=True),
        ]
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        probe = RunSpec(agent="reference", tasks=args.tasks, output=Path(scratch) / "probe")
        tasks_by_id = {task_id: task for task, task_id in select_tasks(probe)}
        for number, plan in enumerate(plans):
            config = RunSpec(
                tasks=args.tasks, output=Path(scratch) / str(number), baselines=False, concurrency=8, **plan
            )
            result = measure(config, tasks_by_id)
            results.append(result)
            if not args.markdown:
                print(json.dumps(result), flush=True)
        for mode in ("prompt", "guard"):  # a recorded model: one run per domain file, pooled
            parts = []
            for number, plan in enumerate(p for p in replays if p["env_mode"] == mode):
                config = RunSpec(
                    tasks=args.tasks,
                    output=Path(scratch) / f"replay-{mode}-{number}",
                    baselines=False,
                    concurrency=8,
                    **plan,
                )
                parts.append(measure(config, tasks_by_id))
            if parts:
                pooled = dict(parts[0], agent=f"replay of {args.replay}")
                for key in (
                    "episodes",
                    "passed",
                    "unverified_executions",
                    "prevented",
                    "forbidden_goal_executions",
                    "outcome_right",
                    "infra_errors",
                    "seconds",
                ):
                    pooled[key] = sum(part[key] for part in parts)
                for key in ("must_succeed", "must_refuse"):
                    pooled[key] = [sum(part[key][i] for part in parts) for i in (0, 1)]
                pooled["pass_rate"] = pooled["passed"] / pooled["episodes"] if pooled["episodes"] else None
                results.append(pooled)
                if not args.markdown:
                    print(json.dumps(pooled), flush=True)
    if args.markdown:
        print(
            "| agent | env mode | other settings | pass rate | must succeed | must refuse | unverified "
            "executions | prevented by the guard | forbidden goal executions | outcome right |"
        )
        print("|---|---|---|--:|--:|--:|--:|--:|--:|--:|")
        for r in results:
            settings = (
                ", ".join(
                    f"{k}={v}"
                    for k, v in r["settings"].items()
                    if v
                    != {"shuffle_tools": False, "constraint_format": "structured", "default_sop": "full"}[k]
                )
                or "-"
            )
            s, f = r["must_succeed"], r["must_refuse"]
            print(
                f"| {r['agent']} | {r['env_mode']} | {settings} | {r['passed']}/{r['episodes']} = "
                f"{100 * r['pass_rate']:.2f}% | {s[0]}/{s[1]} | {f[0]}/{f[1]} | {r['unverified_executions']} | "
                f"{r['prevented']} | {r['forbidden_goal_executions']} | {r['outcome_right']} |"
            )


if __name__ == "__main__":
    main()
