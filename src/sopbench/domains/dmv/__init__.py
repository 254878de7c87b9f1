"""The DMV domain: vehicle registration, driver's licences and driving tests.

Importing this package registers ``DOMAIN`` (name ``dmv``, lenient system name ``DMV``).
"""

from pathlib import Path

from sopbench.domains import REQUIRED, Domain, register_domain

from .state import DMVDatabase, new_session

# Domain option: how a licence number is derived from the username when a drive test is passed.
# "digest" (default): a stable digest, the same in every process. "python_hash": the interpreter's
# salted hash(), as the published code did (repeatable only with a fixed PYTHONHASHSEED).
LICENCE_NUMBER_OPTION = "licence_number"

DOMAIN = register_domain(
    Domain.from_sop_file(
        "dmv",
        Path(__file__).with_name("sop.json"),
        system_name="DMV",
        new_session=new_session,
        database_model=DMVDatabase,
        description=(
            "You are the online assistant of a department of motor vehicles. You help people with "
            "their accounts, register and renew vehicles, keep vehicle and licence details up to date, "
            "renew driver's licences, book and record knowledge and driving tests, and transfer vehicle "
            "titles, using the tools described below."
        ),
        options={LICENCE_NUMBER_OPTION: "digest"},
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

__all__ = ["DOMAIN", "LICENCE_NUMBER_OPTION", "DMVDatabase", "new_session"]
