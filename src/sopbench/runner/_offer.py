"""What an agent is shown of a domain besides its tool list: each action's SOP, how constraints are checked."""

from __future__ import annotations

from collections.abc import Mapping

from sopbench.constraints import Expr, Single
from sopbench.domains import DependencyOption, Domain, default_dependencies


def default_sops(domain: Domain, option: DependencyOption) -> Mapping[str, Expr | None]:
    """Every tool's default SOP (not expanded): what the prompt shows per action. ``option``:
    ``full`` (required and customizable constraints) or ``required`` (the required part only)."""
    return default_dependencies(domain.catalogue, option, expanded=False)


def verifiers(domain: Domain) -> dict[str, Expr | None]:
    """How each constraint is checked with tools, in the constraint's own parameter names.

    A verification process (``sufficient_account_balance`` -> ``get_account_balance`` or the
    database) or, for a session constraint, the call that establishes it (``logged_in_user`` ->
    ``login_user``, its other parameters named as themselves). ``None``: no tool needed.
    """
    catalogue = domain.catalogue
    table: dict[str, Expr | None] = dict(catalogue.processes)
    for constraint in catalogue.links:
        linked = catalogue.linked_call(Single(constraint))
        assert linked is not None, constraint  # every constraint of ``links`` has its call
        tool, params = linked
        table[constraint] = Single(tool, tuple(params.items()))
    return table
