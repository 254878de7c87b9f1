"""The bank domain: accounts, transfers and payments, loans, safety boxes, credit cards, exchange.

The lenient system is published as ``Bank``. Option ``credit_cards`` (``"list"``, the default, or
``"dict"``) chooses between looking cards up as the task data stores them and reproducing what the
published code does with that data; see ``tools.py``.
"""

from pathlib import Path

from sopbench.domains import REQUIRED, Domain, register_domain

from .state import CARDS_AS_STORED, CREDIT_CARDS_OPTION, BankDatabase, new_session

DOMAIN = register_domain(
    Domain.from_sop_file(
        "bank",
        Path(__file__).with_name("sop.json"),
        system_name="Bank",
        new_session=new_session,
        database_model=BankDatabase,
        description=(
            "You are a bank clerk who serves customers of a retail bank: you open, update and close "
            "accounts, move money between accounts, take deposits and bill payments, grant and "
            "collect loans, manage safety deposit boxes and credit cards, and exchange dollars for "
            "foreign currency, using the functions available to you."
        ),
        options={CREDIT_CARDS_OPTION: CARDS_AS_STORED},
        # The published strict class gave these methods an explicit signature (all others took
        # ``**kwargs``): arguments that do not fit raised TypeError before any check, and a
        # missing optional credential defaulted to None.
        published_strict_signatures={
            "login_user": {"username": REQUIRED, "identification": None},
            "logout_user": {"username": REQUIRED},
            "authenticate_admin_password": {"username": REQUIRED, "admin_password": REQUIRED},
        },
    )
)

from . import constraints, tools  # noqa: E402,F401  (registers the rules on DOMAIN)

__all__ = ["DOMAIN"]
