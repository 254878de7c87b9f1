"""The HTML report's figures, drawn with matplotlib as SVG text to embed in the page.

Each function takes figures already computed (by ``sopbench.statistics`` and the leaderboard) and
only draws them. Every figure names a configuration in words (``Series.name``) and draws it in the
one colour it has in every figure (``Series.colour``, from its leaderboard row); a configuration
with too few cases to rank (``Series.faint``) keeps its label, greyed, and gets no bar or point.
Labels never sit on each other: the bar charts give each row its own line of height, and the two
plots of points name them in a legend beside the axes rather than next to each point. The SVG is
deterministic (fixed ids, no date) and keeps text as text (small, searchable); matplotlib escapes
every label it writes.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Figures are made as Figure objects, never through pyplot: no backend or window is chosen (a
# program that imports this keeps its own), nothing is left open to close, and pyplot's import
# and figure managers are not paid for.
import matplotlib
from matplotlib.backends.backend_svg import FigureCanvasSVG, RendererSVG
from matplotlib.figure import Figure
from matplotlib.layout_engine import TightLayoutEngine
from matplotlib.transforms import Bbox

_STYLE: dict[Any, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "sopbench-report",
    "font.size": 8,
    "font.family": "sans-serif",
    "axes.spines.top": False,
    "axes.spines.right": False,
}
# 20 well-separated colours (matplotlib's tab20, dark shades first): row n gets _PALETTE[n % 20],
# so configurations near each other in the ranking never share a colour.
_PALETTE = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#aec7e8",
    "#ffbb78",
    "#98df8a",
    "#ff9896",
    "#c5b0d5",
    "#c49c94",
    "#f7b6d2",
    "#c7c7c7",
    "#dbdb8d",
    "#9edae5",
]
_PARTS = ["#3b6ea5", "#c0504d", "#9bbb59", "#8064a2", "#4bacc6", "#f79646", "#7f7f7f", "#2c4d75"]
FAINT = "#9a9a9a"  # the label colour of a configuration drawn without a bar
_LINE = 0.2  # inches of height per configuration in the bar charts: an 8 pt label is 0.11 in


def colour_of(number: int) -> str:
    """The colour of leaderboard row ``number`` (from 1) in every figure."""
    return _PALETTE[(number - 1) % len(_PALETTE)]


@dataclass(frozen=True)
class Series:
    """One configuration as the figures show it."""

    name: str  # in words: model, mode, tool list, user
    colour: str
    faint: bool = False  # too few cases: label greyed, nothing drawn


@dataclass(frozen=True)
class RateBar:
    """One rate with its 95% interval (fractions), or nothing measured."""

    rate: float | None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Point:
    """One configuration on the must-succeed / must-refuse plane."""

    series: Series
    succeed: RateBar
    refuse: RateBar
    baseline: bool = False


_SVG_DPI = FigureCanvasSVG.fixed_dpi  # an SVG is drawn in points, whatever the figure's dpi


def _subplots(*grid: int, figsize: tuple[float, float], **options: Any) -> tuple[Figure, Any]:
    """``pyplot.subplots`` without pyplot: a new figure of ``figsize`` inches and its axes."""
    figure = Figure(figsize=figsize)
    return figure, figure.subplots(*grid, **options)


def _tight_layout(figure: Figure, *, w_pad: float) -> None:
    """``figure.tight_layout(w_pad=w_pad)``, but a figure without a layout engine is left without one:
    tight_layout leaves a placeholder engine that lays nothing out yet makes savefig draw the whole
    figure once more before measuring it (``_svg``)."""
    if figure.get_layout_engine() is None:
        # rect None, as tight_layout passes it (one layout pass; the stub admits only a tuple)
        TightLayoutEngine(w_pad=w_pad, rect=None).execute(figure)  # type: ignore[arg-type]
    else:
        figure.tight_layout(w_pad=w_pad)


def _svg(figure: Figure) -> str:
    buffer = io.StringIO()
    metadata = {"Date": None, "Creator": None}
    if figure.get_layout_engine() is None:
        figure.savefig(buffer, format="svg", metadata=metadata, bbox_inches=_tight_box(figure), dpi=_SVG_DPI)
    else:  # an engine lays the figure out as it is drawn: only savefig's own drawing measures that
        figure.savefig(buffer, format="svg", metadata=metadata, bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # drop the XML declaration and doctype: the SVG goes inline


def _tight_box(figure: Figure) -> Bbox:
    """The box ``savefig(bbox_inches="tight")`` crops to, without the drawing it does first to measure
    (its output thrown away, then the figure drawn again): every extent is computed when asked for
    (ticks, title positions, legend layout, autoscaled limits), so the box is the very same and the
    figure is drawn once. Measured as savefig measures it, by an SVG renderer with the figure at the
    SVG's dpi; savefig is then given that dpi, so the crop is scaled by exactly 1, as it was."""
    dpi = figure.dpi
    figure.dpi = _SVG_DPI
    try:
        width, height = figure.get_size_inches()
        box = figure.get_tightbbox(RendererSVG(width * _SVG_DPI, height * _SVG_DPI, io.StringIO()))
    finally:
        figure.dpi = dpi
    pad = matplotlib.rcParams["savefig.pad_inches"]
    return box.padded(pad, pad)


def _errors(bars: Sequence[RateBar]) -> list[list[float]]:
    low = [0.0 if b.rate is None or b.low is None else 100 * (b.rate - b.low) for b in bars]
    high = [0.0 if b.rate is None or b.high is None else 100 * (b.high - b.rate) for b in bars]
    return [low, high]


def _label_rows(ax: Any, series: Sequence[Series], *, labelled: bool = True) -> None:
    """One tick per configuration, top to bottom, its label greyed when it is drawn without a bar
    (the panels share their y axis: only the first one writes the labels)."""
    if not labelled:
        ax.tick_params(labelleft=False)
        return
    ax.set_yticks(range(len(series)), [s.name for s in series])
    ax.set_ylim(len(series) - 0.5, -0.5)
    for tick, s in zip(ax.get_yticklabels(), series, strict=True):
        tick.set_color(FAINT if s.faint else "#222222")


def domain_rates_svg(series: Sequence[Series], columns: Mapping[str, Sequence[RateBar]]) -> str:
    """One panel per column (each domain, then Overall), side by side, sharing the configurations'
    labels on the left: a bar per configuration in its colour, with its interval."""
    with matplotlib.rc_context(_STYLE):
        count = max(len(columns), 1)
        height = _LINE * len(series) + 0.8
        figure, axes = _subplots(1, count, figsize=(1.35 * count + 2.2, height), sharey=True, squeeze=False)
        shown = [i for i, s in enumerate(series) if not s.faint]
        for index, (title, bars) in enumerate(columns.items()):
            ax = axes[0][index]
            drawn = [i for i in shown if bars[i].rate is not None]
            ax.barh(
                drawn,
                [100 * (bars[i].rate or 0.0) for i in drawn],
                xerr=_errors([bars[i] for i in drawn]),
                color=[series[i].colour for i in drawn],
                height=0.7,
                error_kw={"elinewidth": 0.8, "capsize": 1.5, "ecolor": "#333333"},
            )
            ax.set_title(title)
            ax.set_xlim(0, 100)
            ax.set_xticks([0, 50, 100])
            ax.set_xlabel("pass %")
        for index, ax in enumerate(axes[0]):
            _label_rows(ax, series, labelled=index == 0)
        _tight_layout(figure, w_pad=0.6)
        return _svg(figure)


def split_scatter_svg(points: Sequence[Point]) -> str:
    """Must-succeed pass rate against must-refuse pass rate, intervals both ways: each configuration
    in its colour, named in the legend beside the plot (the baselines as squares)."""
    with matplotlib.rc_context(_STYLE):
        drawn = [
            p
            for p in points
            if not p.series.faint and p.succeed.rate is not None and p.refuse.rate is not None
        ]
        figure, ax = _subplots(figsize=(4.2, 4.0))
        for point in drawn:
            x, y = 100 * (point.succeed.rate or 0.0), 100 * (point.refuse.rate or 0.0)
            ax.errorbar(
                [x],
                [y],
                xerr=_errors([point.succeed]),
                yerr=_errors([point.refuse]),
                fmt="s" if point.baseline else "o",
                color=point.series.colour,
                markersize=6 if point.baseline else 4,
                elinewidth=0.6,
                capsize=1.5,
                label=point.series.name,
            )
        corners = ax.plot([0, 100], [100, 0], linestyle="none", marker="x", color="#555555", markersize=7)
        corners[0].set_label("corners: refuse everything (top left), do everything asked (bottom right)")
        ax.plot([0, 100], [100, 0], linestyle=":", color="#aaaaaa", linewidth=0.8, label="balanced score 50")
        ax.set_xlim(-5, 105)
        ax.set_ylim(-5, 105)
        ax.set_xlabel("must succeed: pass rate %")
        ax.set_ylabel("must refuse: pass rate %")
        ax.legend(
            loc="upper left",
            bbox_to_anchor=(1.02, 1.0),
            frameon=False,
            fontsize=7,
            ncols=1 if len(drawn) <= 28 else 2,
            borderaxespad=0,
        )
        return _svg(figure)


def failures_svg(series: Sequence[Series], panels: Mapping[str, Mapping[str, Sequence[float | None]]]) -> str:
    """Stacked bars of percentages, one panel per breakdown: ``panels[title][part]`` gives each
    configuration's share (None: nothing to show, e.g. no failure to break down)."""
    with matplotlib.rc_context(_STYLE):
        height = _LINE * len(series) + 1.5  # the legend sits under the axes
        figure, axes = _subplots(
            1,
            max(len(panels), 1),
            figsize=(3.6 * max(len(panels), 1) + 2.2, height),
            sharey=True,
            squeeze=False,
        )
        for ax, (title, parts) in zip(axes[0], panels.items(), strict=False):
            left = [0.0] * len(series)
            for part_index, (part, shares) in enumerate(parts.items()):
                drawn = [i for i, s in enumerate(series) if not s.faint and shares[i] is not None]
                values = [100 * (shares[i] or 0.0) for i in drawn]
                ax.barh(
                    drawn,
                    values,
                    left=[left[i] for i in drawn],
                    label=part,
                    color=_PARTS[part_index % len(_PARTS)],
                    height=0.7,
                )
                for i, value in zip(drawn, values, strict=True):
                    left[i] += value
            ax.set_title(title)  # it names the unit: no x label to collide with the legend under the axis
            if parts:
                ax.legend(
                    loc="upper center",
                    bbox_to_anchor=(0.5, -0.9 / height),
                    frameon=False,
                    ncols=min(len(parts), 4),
                    fontsize=7,
                )
        for index, ax in enumerate(axes[0]):
            _label_rows(ax, series, labelled=index == 0)
        _tight_layout(figure, w_pad=0.6)
        return _svg(figure)


def pass_hat_k_svg(series: Sequence[tuple[Series, Mapping[int, float]]]) -> str:
    """pass^k against k, one line per configuration in its colour, named in the legend beside it."""
    with matplotlib.rc_context(_STYLE):
        figure, ax = _subplots(figsize=(4.2, 3.2))
        drawn = [(s, values) for s, values in series if not s.faint and values]
        for s, values in drawn:
            ks = sorted(values)
            ax.plot(ks, [100 * values[k] for k in ks], marker="o", markersize=3, label=s.name, color=s.colour)
        ks = sorted({k for _, values in drawn for k in values})
        if ks:
            ax.set_xticks(ks)
        ax.set_ylim(0, 100)
        ax.set_xlabel("k")
        ax.set_ylabel("pass^k %")
        if drawn:
            ax.legend(
                loc="upper left",
                bbox_to_anchor=(1.02, 1.0),
                frameon=False,
                fontsize=7,
                ncols=1 if len(drawn) <= 20 else 2,
                borderaxespad=0,
            )
        return _svg(figure)
