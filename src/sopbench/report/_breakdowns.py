"""Tables of the breakdowns (by goal, judgement, constraint: ``sopbench.results.breakdowns``) and
of tokens, latency and cost."""

from __future__ import annotations

from collections.abc import Sequence

from sopbench.results import breakdowns
from sopbench.statistics import Outcome, UsageSummary

from ._table import TextTable, rate_text


def breakdown_tables(outcomes: Sequence[Outcome], by: Sequence[str], label: str) -> list[TextTable]:
    """One table per breakdown asked for (``--by``), over the outcomes of one configuration."""
    tables = []
    for name, data in breakdowns(outcomes, by).items():
        if name == "goal":
            table = TextTable(f"{label}: pass rate by goal", ["goal", "pass rate"])
            for goal, rate in data.items():
                ci = rate["ci95"]
                table.add_row(
                    [goal, rate_text(rate["passed"], rate["total"], None if ci is None else tuple(ci))]
                )
        elif name == "judgement":
            table = TextTable(
                f"{label}: {data['failed_runs']} failed runs by judgement (a run can fail several)",
                ["judgement", "share of failed runs"],
            )
            for judgement, rate in data["judgements"].items():
                table.add_row([judgement, rate_text(rate["passed"], rate["total"])])
        else:
            table = TextTable(
                f"{label}: {data['procedure_failures']} procedure failures, {data['findings']} findings "
                "(a constraint left unverified, by kind and nesting depth; an invalid call; a violated constraint)",
                ["what failed the procedure", "share"],
            )
            for kind, rate in data["by_kind"].items():
                table.add_row([f"kind {kind}", rate_text(rate["passed"], rate["total"])])
            for depth, rate in data["by_depth"].items():
                table.add_row([f"depth {depth}", rate_text(rate["passed"], rate["total"])])
        tables.append(table)
    return tables


def usage_table(usage: UsageSummary, label: str) -> TextTable:
    """Tokens (agent and user apart), latency and, with prices, the cost of live episodes."""
    columns = ["episodes", "agent tokens in/out", "user tokens in/out", "latency mean/p50/p95 (s)"]
    priced = usage.cost_usd is not None
    table = TextTable(
        f"{label}: tokens and latency", columns + (["cost USD (per episode)"] if priced else [])
    )

    def seconds(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    row = [
        str(usage.episodes),
        f"{usage.agent_prompt_tokens}/{usage.agent_completion_tokens}",
        f"{usage.user_prompt_tokens}/{usage.user_completion_tokens}",
        "/".join(seconds(v) for v in (usage.latency_mean_s, usage.latency_p50_s, usage.latency_p95_s)),
    ]
    if priced:
        row.append(f"{usage.cost_usd:.4f} ({usage.cost_per_episode_usd:.6f})")
    table.add_row(row)
    return table
