"""The numbers of the HTML report as shown, and where each one links: the viewer's list of the
episodes behind it, or a section of the file that lists them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlencode

from sopbench.statistics import Outcome, wilson_interval


@dataclass(frozen=True)
class Number:
    """A number as shown, where its episodes are (None: nowhere to go), and its sort value."""

    text: str
    href: str | None = None
    sort: float | None = None
    title: str = ""


@dataclass
class EpisodeGroup:
    anchor: str
    title: str
    episodes: list[int]  # embedded episode numbers


@dataclass
class Links:
    """Where the episodes behind a number are shown: the viewer's list, or a section of the file."""

    viewer_url: str
    embedded: dict[tuple[str, str, int], int] | None  # (source, task, run) -> embedded episode number
    groups: dict[tuple[tuple[str, str], ...], EpisodeGroup] = field(default_factory=dict)
    group_page: str = "#{}"  # where a group's list is: a section of the file, or a page of a site

    def compare_href(self, a: str, b: str, task: str) -> str:
        """The viewer's side-by-side page of one task under configurations ``a`` and ``b``."""
        from sopbench.view import compare_address

        return self.viewer_url.rstrip("/") + compare_address(a, b, task)

    def href(self, filters: Mapping[str, str], outcomes: Sequence[Outcome], title: str) -> str | None:
        key = tuple(sorted(filters.items()))
        if self.embedded is None:
            return self.viewer_url + "?" + urlencode(dict(key))
        if key not in self.groups:
            numbers = [
                self.embedded[k] for o in outcomes if (k := (o.source, o.task_id, o.run)) in self.embedded
            ]
            if not numbers:
                return None
            self.groups[key] = EpisodeGroup(f"g{len(self.groups)}", title, sorted(numbers))
        return self.group_page.format(self.groups[key].anchor)


def short_percent(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}"


def short_interval(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f"[{100 * ci[0]:.1f}–{100 * ci[1]:.1f}]"


def rate_number(
    passed: int, total: int, href: str | None, what: str, ci95: tuple[float, float] | None = None
) -> Number:
    """A rate with its 95% interval (``ci95`` when given, clustered by task; else Wilson's)."""
    if not total:
        return Number("-")
    ci = ci95 if ci95 is not None else wilson_interval(passed, total)
    return Number(
        f"{100 * passed / total:.1f} {short_interval(ci)} ({total})",
        href,
        passed / total,
        f"{what}: {passed} of {total} passed",
    )


def headline_rate(passed: int, total: int, href: str | None, what: str) -> Number:
    """The leaderboard's pass rate: the number alone (its interval and cases have their own columns)."""
    if not total:
        return Number("-")
    return Number(f"{100 * passed / total:.1f}", href, passed / total, f"{what}: {passed} of {total} passed")
