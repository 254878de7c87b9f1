"""The HTML report's figures, drawn with matplotlib as SVG text to embed in the page.

Each function takes figures already computed (by ``sopbench.statistics`` and the leaderboard) and
only draws them. Configurations are named by their row number in the leaderboard (``#3``), so that
a figure stays legible with dozens of them. The SVG is deterministic (fixed ids, no date) and keeps
text as text (small, searchable); matplotlib escapes every label it writes.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: figures are only ever written to text

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

__all__ = ["Point", "RateBar", "domain_rates_svg", "failures_svg", "pass_hat_k_svg", "split_scatter_svg"]

_STYLE: dict[Any, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "sopbench-report",
    "font.size": 8,
    "font.family": "sans-serif",
    "axes.spines.top": False,
    "axes.spines.right": False,
}
_COLOURS = ["#3b6ea5", "#c0504d", "#9bbb59", "#8064a2", "#4bacc6", "#f79646", "#7f7f7f", "#2c4d75"]


@dataclass(frozen=True)
class RateBar:
    """One rate with its 95% interval (fractions), or nothing measured."""

    rate: float | None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Point:
    """One configuration on the must-succeed / must-refuse plane."""

    name: str  # its row number, or the baseline's name
    succeed: RateBar
    refuse: RateBar
    baseline: bool = False


def _svg(figure: Figure) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    plt.close(figure)
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # drop the XML declaration and doctype: the SVG goes inline


def _errors(bars: Sequence[RateBar]) -> list[list[float]]:
    low = [0.0 if b.rate is None or b.low is None else 100 * (b.rate - b.low) for b in bars]
    high = [0.0 if b.rate is None or b.high is None else 100 * (b.high - b.rate) for b in bars]
    return [low, high]


def domain_rates_svg(names: Sequence[str], columns: Mapping[str, Sequence[RateBar]]) -> str:
    """One panel per column (each domain, then Overall): a bar per configuration with its interval."""
    with plt.rc_context(_STYLE):
        count = max(len(columns), 1)
        per_row = min(count, 4)
        rows = -(-count // per_row)
        height = max(1.6, 0.16 * len(names) + 0.7)
        figure, axes = plt.subplots(rows, per_row, figsize=(2.3 * per_row, height * rows), sharey=True, squeeze=False)
        positions = list(range(len(names)))
        for index, (title, bars) in enumerate(columns.items()):
            ax = axes[index // per_row][index % per_row]
            values = [0.0 if b.rate is None else 100 * b.rate for b in bars]
            ax.barh(positions, values, xerr=_errors(bars), color=_COLOURS[index % len(_COLOURS)], height=0.7,
                    error_kw={"elinewidth": 0.8, "capsize": 1.5, "ecolor": "#333333"})
            ax.set_title(title)
            ax.set_xlim(0, 100)
            ax.set_yticks(positions, list(names))
            ax.set_xlabel("pass rate %")
        axes[0][0].invert_yaxis()  # once: the panels share their y axis (row #1 on top)
        for index in range(len(columns), rows * per_row):
            axes[index // per_row][index % per_row].set_visible(False)
        figure.tight_layout()
        return _svg(figure)


def split_scatter_svg(points: Sequence[Point]) -> str:
    """Must-succeed pass rate against must-refuse pass rate, intervals both ways; baselines marked."""
    with plt.rc_context(_STYLE):
        figure, ax = plt.subplots(figsize=(4.6, 4.2))
        for point in points:
            if point.succeed.rate is None or point.refuse.rate is None:
                continue
            x, y = 100 * point.succeed.rate, 100 * point.refuse.rate
            ax.errorbar([x], [y], xerr=_errors([point.succeed]), yerr=_errors([point.refuse]),
                        fmt="s" if point.baseline else "o", color="#c0504d" if point.baseline else "#3b6ea5",
                        markersize=6 if point.baseline else 4, elinewidth=0.6, capsize=1.5)
            ax.annotate(point.name, (x, y), textcoords="offset points", xytext=(4, 4),
                        fontweight="bold" if point.baseline else "normal")
        for (x, y), name in (((0, 100), "refuses everything"), ((100, 0), "does everything asked")):
            ax.plot([x], [y], marker="x", color="#7f7f7f", markersize=7)
            ax.annotate(name, (x, y), textcoords="offset points", xytext=(6 if x == 0 else -6, -10 if y else 6),
                        ha="left" if x == 0 else "right", color="#555555")
        ax.plot([0, 100], [100, 0], linestyle=":", color="#aaaaaa", linewidth=0.8)  # balanced score 50
        ax.set_xlim(-5, 105)
        ax.set_ylim(-5, 105)
        ax.set_xlabel("must succeed: pass rate %")
        ax.set_ylabel("must refuse: pass rate %")
        figure.tight_layout()
        return _svg(figure)


def failures_svg(names: Sequence[str], panels: Mapping[str, Mapping[str, Sequence[int]]]) -> str:
    """Stacked bars, one panel per breakdown: ``panels[title][part]`` gives each configuration's count."""
    with plt.rc_context(_STYLE):
        height = max(1.6, 0.16 * len(names) + 0.9)
        figure, axes = plt.subplots(1, max(len(panels), 1), figsize=(4.4 * max(len(panels), 1), height), squeeze=False)
        positions = list(range(len(names)))
        for ax, (title, parts) in zip(axes[0], panels.items(), strict=False):
            left = [0.0] * len(names)
            for index, (part, counts) in enumerate(parts.items()):
                ax.barh(positions, list(counts), left=left, label=part, color=_COLOURS[index % len(_COLOURS)], height=0.7)
                left = [a + b for a, b in zip(left, counts, strict=True)]
            ax.set_title(title)
            ax.set_yticks(positions, list(names))
            ax.invert_yaxis()
            ax.set_xlabel("count")
            if parts:
                ax.legend(loc="lower right", frameon=False)
        figure.tight_layout()
        return _svg(figure)


def pass_hat_k_svg(series: Mapping[str, Mapping[int, float]]) -> str:
    """pass^k against k, one line per configuration."""
    with plt.rc_context(_STYLE):
        figure, ax = plt.subplots(figsize=(4.6, 3.2))
        for index, (name, values) in enumerate(series.items()):
            ks = sorted(values)
            ax.plot(ks, [100 * values[k] for k in ks], marker="o", markersize=3, label=name,
                    color=_COLOURS[index % len(_COLOURS)])
        ks = sorted({k for values in series.values() for k in values})
        if ks:
            ax.set_xticks(ks)
        ax.set_ylim(0, 100)
        ax.set_xlabel("k")
        ax.set_ylabel("pass^k %")
        if series:
            ax.legend(frameon=False, fontsize=7, ncols=2 if len(series) > 8 else 1)
        figure.tight_layout()
        return _svg(figure)
