"""The healthcare domain: insurance policies, claims, authorised providers and appointments.

A policy holder logs in with a username and an identification string; the assistant then reads or
changes the policy (type, coverage, declared income), files and appeals claims, authorises providers
and books appointments with them. The SOP tables are in ``sop.json``; the tools are in ``tools.py``
and the truth of every constraint in ``constraints.py``.
"""

from pathlib import Path

from sopbench.domains import REQUIRED, Domain, register_domain

from .state import HealthcareDatabase, new_session

DOMAIN = register_domain(
    Domain.from_sop_file(
        "healthcare",
        Path(__file__).with_name("sop.json"),
        system_name="Healthcare",
        new_session=new_session,
        database_model=HealthcareDatabase,
        description=(
            "You are the assistant of a health insurance company. You help policy holders with their "
            "accounts: reading and updating their policy, deactivating or reactivating it, filing a "
            "claim for a treatment and appealing a decision on one, adding a provider to the list of "
            "providers their policy authorises, and booking appointments with providers. Each of these "
            "services comes with conditions that must be checked, in the stated order, before you act."
        ),
        # The published strict class gave these methods an explicit signature (all others took
        # ``**kwargs``): arguments that do not fit raised TypeError before any check, and a
        # missing optional credential defaulted to None.
        published_strict_signatures={
            "login_user": {"username": REQUIRED, "identification": None},
            "logout_user": {"username": REQUIRED},
        },
    )
)

from . import constraints, tools  # noqa: E402,F401  (registers the rules on DOMAIN)

__all__ = ["DOMAIN", "HealthcareDatabase", "new_session"]
