"""The tables of the HTML report: the leaderboard's rows, the paired comparisons, the per-goal and
the failure tables, every number linked to the episodes behind it."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sopbench.results import Leaderboard
from sopbench.scoring import LeaderboardRow
from sopbench.statistics import Outcome, PairedComparison, RateInterval, breakdown, compare_outcomes

from ._compare import _p_text
from ._html_numbers import Links, Number, headline_rate, rate_number, short_interval, short_percent

BASELINES = ("refuse-all", "no-verify")  # the floors: the two trivial agents


@dataclass
class Row:
    """One leaderboard row as shown."""

    number: int
    row: LeaderboardRow
    label: str
    configuration: str | None  # the viewer's name of it (its filter value); None for a baseline
    outcomes: list[Outcome]
    domains: list[Number]
    overall: Number  # the headline pass rate
    hats: list[Number]
    succeed: Number
    refuse: Number
    balanced: Number
    baseline: bool
    ranked: bool
    interval: str = ""  # the pass rate's 95% interval
    name: str = ""  # in words, as the figures name it (the label, and its folder when two share it)
    by_default: Number = Number("")  # the share of the row's passes with no well-formed action

    @property
    def cases(self) -> int:
        return self.row.overall.cases

    @property
    def headline_hat(self) -> Number:
        """pass^K at the table's largest K (the other k sit in the detail columns)."""
        return self.hats[-1] if self.hats else Number("")


def by_default_number(outcomes: Sequence[Outcome]) -> Number:
    """Passes by default among the passes (``-``: no pass, or a source that does not tell)."""
    passes = [o for o in outcomes if o.passed]
    known = [o for o in passes if o.by_default is not None]
    if not passes or len(known) < len(passes):
        return Number("-")
    count = sum(1 for o in known if o.by_default)
    share = count / len(passes)
    return Number(
        f"{100 * share:.1f} ({count}/{len(passes)})", None, share, "passes with no well-formed action"
    )


def is_baseline(row: LeaderboardRow) -> bool:
    """The refuse-all or no-verify floor the report adds (not an agent's run of the same name)."""
    return row.floor


def row_label(row: LeaderboardRow) -> str:
    parts = [row.model] + [p for p in (row.mode, row.tool_list) if p and p != "-"]
    if row.user and row.user != "none":
        parts.append(f"user {row.user}")
    return " ".join(parts)


def html_rows(report: Leaderboard, links: Links) -> list[Row]:
    """Each leaderboard row as shown: its numbers, each linked to the episodes behind it."""
    from sopbench.statistics import Configuration
    from sopbench.view import configuration_name

    hat_ks = report.hat_ks
    labels = [row_label(r) for r in report.rows]
    rows: list[Row] = []
    for number, lb_row in enumerate(report.rows, start=1):
        outcomes = report.row_outcomes(lb_row)
        baseline = is_baseline(lb_row)
        config: Configuration | None = outcomes[0].configuration if outcomes and not baseline else None
        name = None if config is None else configuration_name(config)
        label = row_label(lb_row)

        def link(
            filters: dict[str, str], chosen: Sequence[Outcome], title: str, name: str | None = name
        ) -> str | None:
            if name is None:
                return None
            return links.href({"configuration": name, **filters}, chosen, title)

        domains = []
        for domain in report.domains:
            cell = lb_row.cells.get(domain)
            chosen = [o for o in outcomes if o.domain == domain]
            domains.append(
                Number("")
                if cell is None
                else rate_number(
                    cell.passed,
                    cell.cases,
                    link({"domain": domain}, chosen, f"{label}: {domain}"),
                    f"{label}, {domain}",
                    cell.ci95,
                )
            )
        overall = lb_row.overall
        pooled = lb_row.pooled
        shared = labels.count(label) > 1 and lb_row.folder
        hats = []
        for k in hat_ks:
            repeated = None if pooled is None else pooled.repeated
            if repeated is None or k not in repeated.pass_hat_k:
                hats.append(Number("-"))
            else:
                value = repeated.pass_hat_k[k]
                hats.append(
                    Number(
                        f"{100 * value:.1f} ({repeated.tasks_with_k[k]})",
                        link({}, outcomes, label),
                        value,
                        f"pass^{k} over {repeated.tasks_with_k[k]} tasks with at least {k} runs",
                    )
                )
        if pooled is None:
            succeed = refuse = balanced = Number("")
        else:
            succeed = rate_number(
                pooled.should_succeed[0],
                pooled.should_succeed[1],
                link({}, [o for o in outcomes if o.should_succeed], f"{label}: must succeed"),
                f"{label}, must succeed",
                pooled.succeed_rate.ci95,
            )
            refuse = rate_number(
                pooled.should_refuse[0],
                pooled.should_refuse[1],
                link({}, [o for o in outcomes if not o.should_succeed], f"{label}: must refuse"),
                f"{label}, must refuse",
                pooled.refuse_rate.ci95,
            )
            balanced = (
                Number("-")
                if pooled.balanced is None
                else Number(
                    f"{100 * pooled.balanced:.1f} {short_interval(pooled.balanced_ci95)}",
                    link({}, outcomes, label),
                    pooled.balanced,
                    "mean of the must-succeed and must-refuse rates",
                )
            )
        rows.append(
            Row(
                number,
                lb_row,
                label,
                name,
                outcomes,
                domains,
                headline_rate(overall.passed, overall.cases, link({}, outcomes, label), f"{label}, overall"),
                hats,
                succeed,
                refuse,
                balanced,
                baseline,
                lb_row.ranked,
                short_interval(overall.ci95) if overall.cases else "",
                f"{label} [{lb_row.folder}]" if shared else label,
                by_default=by_default_number(outcomes),
            )
        )
    return rows


# The settings a like-with-like comparison may change, one at a time, the model staying the same.
SETTINGS = (("mode", "mode"), ("tool_list", "tool list"), ("user", "user"), ("folder", "folder"))


def changed_setting(a: LeaderboardRow, b: LeaderboardRow) -> str | None:
    """The one setting two rows of one model differ in (``mode: fc → react``); None when the model
    differs, or more than one setting does."""
    if a.model != b.model:
        return None
    changed = [
        (name, getattr(a, key), getattr(b, key))
        for key, name in SETTINGS
        if getattr(a, key) != getattr(b, key)
    ]
    if len(changed) != 1:
        return None
    name, before, after = changed[0]
    return f"{name}: {before or '-'} → {after or '-'}"


def paired_comparisons(agents: list[Row]) -> list[tuple[Row, Row, PairedComparison]]:
    """Like with like: each two ranked rows of the same model that differ in one setting (the
    better-ranked one as A), when they share tasks."""
    ranked = [r for r in agents if r.ranked]
    out = []
    for a, b in itertools.combinations(ranked, 2):
        if changed_setting(a.row, b.row) is None:
            continue
        result = compare_outcomes(a.outcomes, b.outcomes)
        if result.overall.paired_runs:
            out.append((a, b, result))
    return out


def floor_comparisons(
    agents: list[Row], floors: list[Row]
) -> list[tuple[Row, list[PairedComparison | None]]]:
    """Each ranked row against each floor (refuse-all, no-verify) on the tasks they share (None: none)."""
    out = []
    for row in agents:
        if not row.ranked:
            continue
        results: list[PairedComparison | None] = []
        for floor in floors:
            # One resample: the floors table shows the difference and McNemar's p, not the bootstrap
            # interval, which would cost most of the report's time (a floor differs by far, or not).
            result = compare_outcomes(row.outcomes, floor.outcomes, resamples=1)
            results.append(result if result.overall.paired_runs else None)
        out.append((row, results))
    return out


def difference_number(result: PairedComparison, *, interval: bool = True) -> Number:
    difference = result.overall.difference
    shown = short_interval(result.overall.difference_ci95) if interval else ""
    return Number(
        "-" if difference is None else f"{100 * difference:+.1f} {shown}".rstrip(), None, difference
    )


def comparison_numbers(a: Row, b: Row, result: PairedComparison, links: Links) -> dict[str, Any]:
    overall = result.overall
    paired = {(f.task_id, f.run) for f in (*overall.a_only_passed, *overall.b_only_passed)}
    flipped_a = [o for o in a.outcomes if (o.task_id, o.run) in paired]
    flipped_b = [o for o in b.outcomes if (o.task_id, o.run) in paired]

    def side(
        row: Row, rate: RateInterval, flipped: list[Outcome], flips: Sequence[Any]
    ) -> tuple[Number, Number, list[Number]]:
        href = (
            None
            if row.configuration is None
            else links.href({"configuration": row.configuration}, row.outcomes, row.label)
        )
        count = Number(str(len(flips)), None, len(flips))
        tasks: list[Number] = []
        if row.configuration is not None and links.embedded is not None:
            # The discordant runs themselves exist only as a set of episodes: in the file or the site.
            count = Number(
                str(len(flips)),
                links.href(
                    {"configuration": row.configuration, "flipped": f"{a.number}-{b.number}"},
                    flipped,
                    f"{row.label}: runs that differ from the other side",
                ),
                len(flips),
            )
        elif a.configuration is not None and b.configuration is not None and flips:
            # In the viewer: each task side by side under the two configurations.
            tasks = [
                Number(
                    f"{f.task_id} run {f.run}",
                    links.compare_href(a.configuration, b.configuration, f.task_id),
                )
                for f in flips
            ]
            count = Number(
                str(len(flips)),
                tasks[0].href,
                len(flips),
                f"{len(flips)} runs: the first side by side ({flips[0].task_id}); the list opens the others",
            )
        return (
            Number(f"{short_percent(rate.rate)} {short_interval(rate.ci95)}", href, rate.rate),
            count,
            tasks,
        )

    rate_a, flips_a, tasks_a = side(a, overall.a, flipped_a, overall.a_only_passed)
    rate_b, flips_b, tasks_b = side(b, overall.b, flipped_b, overall.b_only_passed)
    return {
        "a": rate_a,
        "b": rate_b,
        "difference": difference_number(result),
        "p": Number(_p_text(overall.mcnemar_p), None, overall.mcnemar_p),
        "a_only": flips_a,
        "b_only": flips_b,
        "a_only_tasks": tasks_a,
        "b_only_tasks": tasks_b,
        "changed": changed_setting(a.row, b.row) or "",
    }


def goal_table(agents: list[Row], links: Links) -> list[dict[str, Any]]:
    out = []
    for row in agents:
        domain_of = {o.goal: o.domain for o in row.outcomes}
        for goal, rate in breakdown(row.outcomes, "goal").items():
            domain = domain_of[goal]
            chosen = [o for o in row.outcomes if o.goal == goal]
            failed = [o for o in chosen if not o.passed]
            name = row.configuration or ""
            out.append(
                {
                    "row": row,
                    "domain": domain,
                    "goal": goal,
                    "rate": rate_number(
                        rate["passed"],
                        rate["total"],
                        links.href({"configuration": name, "goal": goal}, chosen, f"{row.label}: {goal}"),
                        f"{row.label}, {goal}",
                    ),
                    "runs": Number(str(rate["total"]), None, rate["total"]),
                    "failed": Number(
                        str(len(failed)),
                        links.href(
                            {"configuration": name, "goal": goal, "outcome": "failed"},
                            failed,
                            f"{row.label}: {goal}, failed",
                        )
                        if failed
                        else None,
                        len(failed),
                    ),
                }
            )
    return out


def failure_table(agents: list[Row], links: Links) -> list[dict[str, Any]]:
    out = []
    for row in agents:
        name = row.configuration or ""
        judgement = breakdown(row.outcomes, "judgement")
        constraint = breakdown(row.outcomes, "constraint")
        judged = {}
        for name_j, rate in judgement["judgements"].items():
            chosen = [o for o in row.outcomes if name_j in o.failed]
            judged[name_j] = Number(
                f"{rate['passed']} ({short_percent(rate['rate'])}%)",
                links.href(
                    {"configuration": name, "judgement": name_j}, chosen, f"{row.label}: failed {name_j}"
                )
                if chosen
                else None,
                rate["passed"],
            )
        kinds = {}
        for kind, rate in constraint["by_kind"].items():
            chosen = [o for o in row.outcomes if kind in {f.kind for f in o.findings}]
            kinds[kind] = Number(
                f"{rate['passed']} ({short_percent(rate['rate'])}%)",
                links.href(
                    {"configuration": name, "kind": kind},
                    chosen,
                    f"{row.label}: procedure failed on a {kind} constraint",
                ),
                rate["passed"],
            )
        failed = [o for o in row.outcomes if not o.passed]
        out.append(
            {
                "row": row,
                "failed": Number(
                    str(judgement["failed_runs"]),
                    links.href({"configuration": name, "outcome": "failed"}, failed, f"{row.label}: failed")
                    if failed
                    else None,
                ),
                "judgements": judged,
                "procedure_failures": constraint["procedure_failures"],
                "findings": constraint["findings"],
                "kinds": kinds,
            }
        )
    return out
