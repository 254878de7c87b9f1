"""The HTML report's figures on their own, as SVG text: each configuration a ``Series`` (its name and
colour, from ``colour_of`` its leaderboard row), each rate a ``RateBar``, each point of the split
scatter a ``Point``. Needs matplotlib (the ``report`` extra), which ``sopbench.report`` does not.
"""

from ._plots import (
    FAINT,
    Point,
    RateBar,
    Series,
    colour_of,
    domain_rates_svg,
    failures_svg,
    pass_hat_k_svg,
    split_scatter_svg,
)

__all__ = [
    "FAINT",
    "Point",
    "RateBar",
    "Series",
    "colour_of",
    "domain_rates_svg",
    "failures_svg",
    "pass_hat_k_svg",
    "split_scatter_svg",
]
