"""The tables of the HTML report: the leaderboard's rows, the paired comparisons, the per-goal and
the failure tables, every number linked to the episodes behind it."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sopbench.scoring import LeaderboardRow
from sopbench.statistics import Outcome, PairedComparison, RateInterval, breakdown, compare_outcomes

from ._compare import _p_text
from ._html_numbers import Links, Number, rate_number, short_interval, short_percent
from ._leaderboard import LeaderboardReport

BASELINES = ("refuse-all", "no-verify")
ALL_PAIRS_UP_TO = 6  # with more agents' rows, each is compared with the next one in the ranking


@dataclass
class Row:
    """One leaderboard row as shown."""

    number: int
    row: LeaderboardRow
    label: str
    configuration: str | None  # the viewer's name of it (its filter value); None for a baseline
    outcomes: list[Outcome]
    domains: list[Number]
    overall: Number
    hats: list[Number]
    succeed: Number
    refuse: Number
    balanced: Number
    baseline: bool
    ranked: bool
    by_default: Number = Number("")  # the share of the row's passes with no well-formed action


def by_default_number(outcomes: Sequence[Outcome]) -> Number:
    """Passes by default among the passes (``-``: no pass, or a source that does not tell)."""
    passes = [o for o in outcomes if o.passed]
    known = [o for o in passes if o.by_default is not None]
    if not passes or len(known) < len(passes):
        return Number("-")
    count = sum(1 for o in known if o.by_default)
    share = count / len(passes)
    return Number(f"{100 * share:.1f} ({count}/{len(passes)})", None, share, "passes with no well-formed action")


def is_baseline(row: LeaderboardRow) -> bool:
    """The refuse-all or no-verify floor the report adds (not an agent's run of the same name)."""
    return row.floor


def row_label(row: LeaderboardRow) -> str:
    parts = [row.model] + [p for p in (row.mode, row.tool_list) if p and p != "-"]
    if row.user and row.user != "none":
        parts.append(f"user {row.user}")
    return " ".join(parts)


def html_rows(report: LeaderboardReport, links: Links) -> list[Row]:
    """Each leaderboard row as shown: its numbers, each linked to the episodes behind it."""
    from sopbench.statistics import Configuration
    from sopbench.view import configuration_name

    hat_ks = report.hat_ks
    rows: list[Row] = []
    for number, lb_row in enumerate(report.rows, start=1):
        outcomes = report.outcomes.get(id(lb_row), [])
        baseline = is_baseline(lb_row)
        config: Configuration | None = outcomes[0].configuration if outcomes and not baseline else None
        name = None if config is None else configuration_name(config)
        label = row_label(lb_row)

        def link(filters: dict[str, str], chosen: Sequence[Outcome], title: str, name: str | None = name) -> str | None:
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
                else rate_number(cell.passed, cell.cases, link({"domain": domain}, chosen, f"{label}: {domain}"), f"{label}, {domain}", cell.ci95)
            )
        overall = lb_row.overall
        pooled = lb_row.pooled
        hats = []
        for k in hat_ks:
            repeated = None if pooled is None else pooled.repeated
            if repeated is None or k not in repeated.pass_hat_k:
                hats.append(Number(""))
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
            succeed = rate_number(pooled.should_succeed[0], pooled.should_succeed[1], link({}, [o for o in outcomes if o.should_succeed], f"{label}: must succeed"), f"{label}, must succeed", pooled.succeed_rate.ci95)
            refuse = rate_number(pooled.should_refuse[0], pooled.should_refuse[1], link({}, [o for o in outcomes if not o.should_succeed], f"{label}: must refuse"), f"{label}, must refuse", pooled.refuse_rate.ci95)
            balanced = (
                Number("-")
                if pooled.balanced is None
                else Number(f"{100 * pooled.balanced:.1f} {short_interval(pooled.balanced_ci95)}", link({}, outcomes, label), pooled.balanced, "mean of the must-succeed and must-refuse rates")
            )
        rows.append(
            Row(
                number,
                lb_row,
                label,
                name,
                outcomes,
                domains,
                rate_number(overall.passed, overall.cases, link({}, outcomes, label), f"{label}, overall", overall.ci95),
                hats,
                succeed,
                refuse,
                balanced,
                baseline,
                lb_row.ranked,
                by_default=by_default_number(outcomes),
            )
        )
    return rows


def paired_comparisons(agents: list[Row]) -> list[tuple[Row, Row, PairedComparison]]:
    pairs = (
        list(itertools.combinations(agents, 2))
        if len(agents) <= ALL_PAIRS_UP_TO
        else [(a, b) for a, b in itertools.pairwise([r for r in agents if r.ranked])]
    )
    out = []
    for a, b in pairs:
        result = compare_outcomes(a.outcomes, b.outcomes)
        if result.overall.paired_runs:
            out.append((a, b, result))
    return out


def comparison_numbers(a: Row, b: Row, result: PairedComparison, links: Links) -> dict[str, Number]:
    overall = result.overall
    difference = overall.difference
    paired = {(f.task_id, f.run) for f in (*overall.a_only_passed, *overall.b_only_passed)}
    flipped_a = [o for o in a.outcomes if (o.task_id, o.run) in paired]
    flipped_b = [o for o in b.outcomes if (o.task_id, o.run) in paired]

    def side(row: Row, rate: RateInterval, flipped: list[Outcome], only: int) -> tuple[Number, Number]:
        href = None if row.configuration is None else links.href({"configuration": row.configuration}, row.outcomes, row.label)
        flips = Number(str(only))
        if row.configuration is not None and links.embedded is not None:
            # The discordant runs themselves exist only as a set of episodes: in the file, not the viewer.
            flips = Number(str(only), links.href({"configuration": row.configuration, "flipped": f"{a.number}-{b.number}"}, flipped, f"{row.label}: runs that differ from the other side"), only)
        return Number(f"{short_percent(rate.rate)} {short_interval(rate.ci95)}", href, rate.rate), flips

    rate_a, flips_a = side(a, overall.a, flipped_a, overall.a_only)
    rate_b, flips_b = side(b, overall.b, flipped_b, overall.b_only)
    return {
        "a": rate_a,
        "b": rate_b,
        "difference": Number(
            "-" if difference is None else f"{100 * difference:+.1f} {short_interval(overall.difference_ci95)}",
            None,
            difference,
        ),
        "p": Number(_p_text(overall.mcnemar_p), None, overall.mcnemar_p),
        "a_only": flips_a,
        "b_only": flips_b,
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
                    "rate": rate_number(rate["passed"], rate["total"], links.href({"configuration": name, "goal": goal}, chosen, f"{row.label}: {goal}"), f"{row.label}, {goal}"),
                    "runs": Number(str(rate["total"]), None, rate["total"]),
                    "failed": Number(
                        str(len(failed)),
                        links.href({"configuration": name, "goal": goal, "outcome": "failed"}, failed, f"{row.label}: {goal}, failed") if failed else None,
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
                links.href({"configuration": name, "judgement": name_j}, chosen, f"{row.label}: failed {name_j}") if chosen else None,
                rate["passed"],
            )
        kinds = {}
        for kind, rate in constraint["by_kind"].items():
            chosen = [o for o in row.outcomes if kind in {f.kind for f in o.findings}]
            kinds[kind] = Number(
                f"{rate['passed']} ({short_percent(rate['rate'])}%)",
                links.href({"configuration": name, "kind": kind}, chosen, f"{row.label}: procedure failed on a {kind} constraint"),
                rate["passed"],
            )
        failed = [o for o in row.outcomes if not o.passed]
        out.append(
            {
                "row": row,
                "failed": Number(
                    str(judgement["failed_runs"]),
                    links.href({"configuration": name, "outcome": "failed"}, failed, f"{row.label}: failed") if failed else None,
                ),
                "judgements": judged,
                "procedure_failures": constraint["procedure_failures"],
                "findings": constraint["findings"],
                "kinds": kinds,
            }
        )
    return out
