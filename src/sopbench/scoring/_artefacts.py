"""Recording artefacts: database differences that a recording's own environment caused, not its agent.

Re-scoring a recorded trajectory compares its final database with the oracle's. Where the recording's
environment made a value the agent neither chose nor could know in advance, and our oracle makes it
otherwise, the difference is the recording's, not the agent's. The sound protocol recognises each
such artefact: it compares against the value the recording's environment actually issued (the one the
agent was working with), and names the artefact on the verdict. The sopbench protocol keeps the
published comparison, artefacts and all, so that its verdicts stay the published ones.

Known artefacts (every one found in the published trajectories):

- ``dmv_licence_number_salted_hash``: the published DMV simulator derived a new driver's licence
  number from Python's process-salted ``hash()`` of the username (``update_test_status`` after a
  passed drive test), so the number differs from process to process; ours is a stable digest.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

__all__ = ["ARTEFACTS", "recording_artefacts"]

DMV_LICENCE_NUMBER = "dmv_licence_number_salted_hash"
ARTEFACTS = {
    DMV_LICENCE_NUMBER: "a DMV licence number from the recording's salted hash() (the recording's number is used)",
}

_LICENCE = re.compile(r"D[ 0-9]{10}")


def _dmv_licence_numbers(expected: Any, found: Any) -> tuple[Any, list[str]]:
    """``expected`` with each issued licence number the recording numbered otherwise taken from
    ``found`` (the recording's environment issued it; the agent does not choose it)."""
    accounts, found_accounts = _get(expected, "accounts"), _get(found, "accounts")
    if not isinstance(accounts, dict) or not isinstance(found_accounts, dict):
        return expected, []
    changed: list[str] = []
    adjusted = expected
    for username, account in accounts.items():
        licence = _get(account, "driver_license")
        found_licence = _get(found_accounts.get(username), "driver_license")
        if not isinstance(licence, dict) or not isinstance(found_licence, dict):
            continue
        ours, theirs = licence.get("dl_number"), found_licence.get("dl_number")
        if ours == theirs or not all(isinstance(v, str) and _LICENCE.fullmatch(v) for v in (ours, theirs)):
            continue
        if adjusted is expected:
            adjusted = copy.deepcopy(expected)
        adjusted["accounts"][username]["driver_license"]["dl_number"] = theirs
        changed.append(username)
    return adjusted, changed


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


_BY_DOMAIN: dict[str, list[tuple[str, Callable[[Any, Any], tuple[Any, list[str]]]]]] = {
    "dmv": [(DMV_LICENCE_NUMBER, _dmv_licence_numbers)],
}


def recording_artefacts(domain: str, expected: Any, found: Any) -> tuple[Any, tuple[str, ...]]:
    """The oracle's database ``expected`` with every recording artefact of ``domain`` taken from the
    recorded database ``found``, and the names of the artefacts met (none: ``expected`` itself)."""
    names: list[str] = []
    for name, adjust in _BY_DOMAIN.get(domain, ()):
        expected, changed = adjust(expected, found)
        if changed:
            names.append(name)
    return expected, tuple(names)
