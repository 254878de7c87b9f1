"""The bank domain: accounts, transfers and payments, loans, safety boxes, credit cards, exchange.

The lenient system is published as ``Bank``. Option ``credit_cards`` (``"list"``, the default, or
``"dict"``) chooses between looking cards up as the task data stores them and reproducing what the
published code does with that data; see ``tools.py``.
"""

from pathlib import Path

from sopbench.domains import Domain, register_domain

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
    )
)

from . import constraints, tools  # noqa: E402,F401  (registers the rules on DOMAIN)

__all__ = ["DOMAIN"]
