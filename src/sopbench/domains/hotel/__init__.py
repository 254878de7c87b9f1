"""The hotel domain: a front desk that books, changes and cancels stays, checks guests in and out,
moves them between rooms, takes room-service orders and runs a loyalty programme.

The domain keeps no session state (nobody logs in) and has no constraint links: every procedure is
made of checks on the database, the request's arguments and the time of the interaction.
"""

from pathlib import Path

from sopbench.domains import Domain, register_domain

from .state import HotelDatabase, new_session

DOMAIN = register_domain(
    Domain.from_sop_file(
        "hotel",
        Path(__file__).with_name("sop.json"),
        system_name="Hotel",
        new_session=new_session,
        database_model=HotelDatabase,
        description=(
            "You work at the front desk of a hotel. You look up rooms and prices, make, change and "
            "cancel reservations, check guests in and out, move checked-in guests to another room, "
            "take room-service orders and enrol guests in the loyalty programme, following the "
            "hotel's procedure for each request."
        ),
    )
)

from . import constraints, tools  # noqa: E402,F401  (registers the rules on DOMAIN)

__all__ = ["DOMAIN", "HotelDatabase", "new_session"]
