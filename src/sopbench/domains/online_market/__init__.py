"""The online-market domain: shoppers' carts, orders, returns, exchanges, reviews and coupons."""

from pathlib import Path

from sopbench.domains import REQUIRED, Domain, register_domain

from .state import OnlineMarketDatabase, new_session

DOMAIN = register_domain(
    Domain.from_sop_file(
        "online_market",
        Path(__file__).with_name("sop.json"),
        system_name="OnlineMarket",
        new_session=new_session,
        database_model=OnlineMarketDatabase,
        description=(
            "You help customers of an online shop with their accounts and purchases: signing in and "
            "out, filling a cart and placing orders, managing shipping addresses, looking up products "
            "and orders, cancelling, returning or exchanging orders, applying coupons to orders and "
            "writing product reviews."
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

__all__ = ["DOMAIN", "OnlineMarketDatabase", "new_session"]
