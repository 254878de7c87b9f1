"""The library domain: lending books, late fees, memberships, book management and study rooms.

Dates are human strings such as ``"October 10th, 2024"``; the database's ``interaction_date`` is
"today" for every due date, overdue test and membership expiry.
"""

from pathlib import Path

from sopbench.domains import REQUIRED, Domain, register_domain

from .state import LibraryDatabase, new_session

DOMAIN = register_domain(
    Domain.from_sop_file(
        "library",
        Path(__file__).with_name("sop.json"),
        system_name="Library",
        new_session=new_session,
        database_model=LibraryDatabase,
        description=(
            "You are the front desk of a public library. Members log in to borrow and return books, "
            "look up due dates, top up their balance, pay fees for overdue returns, renew a monthly "
            "membership and book study rooms by the hour; library administrators also add books to "
            "the catalogue and withdraw them. Act only through the tools, and only when the library's "
            "rules for the request are met."
        ),
        # The published strict class gave these methods an explicit signature (all others took
        # ``**kwargs``): arguments that do not fit raised TypeError before any check, and a
        # missing optional credential defaulted to None.
        published_strict_signatures={
            "login_user": {"username": REQUIRED, "password": None},
            "logout_user": {"username": REQUIRED},
        },
    )
)

from . import constraints, tools  # noqa: E402,F401  (registers the rules on DOMAIN)

__all__ = ["DOMAIN", "LibraryDatabase", "new_session"]
