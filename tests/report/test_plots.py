"""The report's figures are drawn once, not twice, and their SVG is byte for byte what matplotlib's
own ``tight_layout()`` and ``savefig(bbox_inches="tight")`` give: users diff reports, so a faster
drawing must not move a single coordinate. Pinned against matplotlib itself (not a stored file), so
the test holds for whatever matplotlib version draws them."""

from __future__ import annotations

import io
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sopbench.report import plots
from sopbench.report.plots import FAINT, Point, RateBar, Series, colour_of


def _series(count: int) -> list[Series]:
    # Names with markup and lengths that differ; every seventh drawn without a bar.
    return [
        Series(f"model-{i} <&> {'long ' * (i % 4)}", colour_of(i + 1), faint=i % 7 == 3) for i in range(count)
    ]


def _bar(rng: random.Random) -> RateBar:
    shape = rng.random()
    if shape < 0.1:
        return RateBar(None)
    if shape < 0.2:
        return RateBar(rng.random())
    low = rng.random()
    high = min(1.0, low + 0.3 * rng.random())
    return RateBar((low + high) / 2, low, high)


def _drawings() -> Iterator[tuple[str, Callable[..., str], tuple[Any, ...]]]:
    rng = random.Random(7)
    for count in (0, 1, 4, 30):  # 30: the legend of points in two columns
        series = _series(count)
        for columns in (0, 1, 3):
            bars = {f"domain {c}": [_bar(rng) for _ in series] for c in range(columns)}
            yield f"domains {count}x{columns}", plots.domain_rates_svg, (series, bars)
        points = [Point(s, _bar(rng), _bar(rng), baseline=i % 5 == 0) for i, s in enumerate(series)]
        yield f"split {count}", plots.split_scatter_svg, (points,)
        parts = {f"part {k}": [rng.choice([None, 0.3 * rng.random()]) for _ in series] for k in range(5)}
        yield f"failures {count}", plots.failures_svg, (series, {"left": parts, "right": {}})
        yield f"failures {count} none", plots.failures_svg, (series, {})
        curves = [(s, {k: rng.random() for k in range(1, 1 + i % 4)}) for i, s in enumerate(series)]
        yield f"pass^k {count}", plots.pass_hat_k_svg, (curves,)


def _drawn_twice_as_matplotlib_does(figure: Any) -> str:
    """The SVG as ``savefig(bbox_inches="tight")`` writes it (it draws the figure once to measure it)."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg") :]


# An empty figure's singular limits, a tight layout that cannot fit: matplotlib warns, as before
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(
    ("name", "draw", "numbers"), list(_drawings()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_each_figure_is_the_svg_of_matplotlibs_own_tight_layout_and_crop(name, draw, numbers, monkeypatch):
    # The one private import of a test (allowed by name in tests/test_architecture.py): the figures'
    # own layout and crop are swapped for matplotlib's, which no public function can ask for. The
    # property pinned is that the swap changes nothing.
    from sopbench.report import _plots

    drawn = draw(*numbers)
    assert drawn.startswith("<svg") and drawn == draw(*numbers)  # deterministic
    monkeypatch.setattr(_plots, "_tight_layout", lambda figure, *, w_pad: figure.tight_layout(w_pad=w_pad))
    monkeypatch.setattr(_plots, "_svg", _drawn_twice_as_matplotlib_does)
    assert drawn == draw(*numbers), name


def test_a_figure_is_drawn_once(monkeypatch):
    from matplotlib.figure import Figure

    draws = []
    original = Figure.draw
    monkeypatch.setattr(
        Figure, "draw", lambda figure, renderer: draws.append(1) or original(figure, renderer)
    )
    series = _series(4)
    plots.domain_rates_svg(series, {"bank": [RateBar(0.5, 0.4, 0.6)] * 4})
    plots.failures_svg(series, {"left": {"part": [0.1, 0.2, None, 0.4]}})
    plots.split_scatter_svg([Point(s, RateBar(0.5, 0.4, 0.6), RateBar(0.2)) for s in series])
    assert len(draws) == 3


def test_a_greyed_configuration_keeps_its_label_in_the_faint_colour():
    svg = plots.domain_rates_svg(_series(4), {"bank": [RateBar(0.5)] * 4})
    assert "model-3 &lt;&amp;&gt;" in svg and FAINT in svg


def test_drawing_a_figure_leaves_the_programs_matplotlib_as_it_was():
    # A notebook that imports sopbench.report keeps its backend, and pyplot is not imported for it.
    code = (
        "import sys, matplotlib; matplotlib.use('svg'); "
        "from sopbench.report import plots; "
        "plots.pass_hat_k_svg([(plots.Series('a', '#123456'), {1: 0.5, 2: 0.25})]); "
        "print(matplotlib.get_backend(), 'matplotlib.pyplot' in sys.modules)"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert shown.stdout.split() == ["svg", "False"]
