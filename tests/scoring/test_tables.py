"""The published strict methods' argument binding, from the signatures each domain declares."""

from __future__ import annotations

import pytest

from sopbench.domains import get_domain
from sopbench.scoring import bind_strict_arguments


def test_strict_signatures_bind_like_the_published_strict_methods() -> None:
    bank, university, hotel = get_domain("bank"), get_domain("university"), get_domain("hotel")
    assert bind_strict_arguments(bank, "login_user", {"username": "a"}) == {
        "username": "a",
        "identification": None,
    }
    with pytest.raises(TypeError, match="unexpected keyword argument 'identification'"):
        bind_strict_arguments(bank, "authenticate_admin_password", {"username": "a", "identification": "x"})
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'password'"):
        bind_strict_arguments(university, "login_user", {"username": "a"})
    assert bind_strict_arguments(hotel, "book_room", {"x": 1}) == {"x": 1}  # **kwargs methods
