"""Seeded pools of realistic values: people, addresses, identifiers, titles, phrases.

Used for values that must *not* be found in the database (an unknown user, a wrong password, a
new address) and to rename the world's people per seed. Chosen by what a variable's name says it
holds; never placeholders.
"""

from __future__ import annotations

import random
import string

FIRST_NAMES = (
    "amara",
    "bruno",
    "chloe",
    "dmitri",
    "elena",
    "farid",
    "grace",
    "hiro",
    "ines",
    "jonas",
    "keira",
    "luca",
    "maren",
    "nadia",
    "oscar",
    "priya",
    "quentin",
    "rosa",
    "samir",
    "tamsin",
    "ulrich",
    "vera",
    "wen",
    "ximena",
    "yusuf",
    "zara",
    "aiden",
    "beatriz",
    "cyrus",
    "delia",
    "emeka",
    "freya",
    "gustavo",
    "hana",
    "ivan",
    "julia",
    "kofi",
    "leila",
    "mateo",
    "noor",
)
LAST_NAMES = (
    "okafor",
    "lindqvist",
    "moreau",
    "tanaka",
    "alvarez",
    "novak",
    "brennan",
    "castillo",
    "dubois",
    "eriksen",
    "fischer",
    "gallagher",
    "haddad",
    "ivanova",
    "jensen",
    "kowalski",
    "larsen",
    "mendes",
    "nakamura",
    "oconnell",
    "petrov",
    "quinn",
    "rossi",
    "schmidt",
    "torres",
    "umar",
    "varga",
    "weber",
)
STREETS = (
    "Maple Avenue",
    "Harbour Road",
    "Juniper Lane",
    "Kingsway",
    "Orchard Street",
    "Willow Crescent",
    "Station Road",
    "Elm Grove",
    "Hillcrest Drive",
    "Bridge Street",
    "Cedar Court",
    "Park Terrace",
)
CITIES = ("Springfield", "Riverton", "Lakeside", "Fairview", "Ashford", "Greenville", "Milton", "Brookfield")
TITLES = (
    "The Quiet Orchard",
    "Northern Lights Atlas",
    "A Field Guide to Moths",
    "The Salt Road",
    "Letters from Lisbon",
    "The Clockmaker's Daughter",
    "Rivers of Iron",
    "Gardening in Small Spaces",
)
PHRASES = (
    "Works exactly as described",
    "Sturdy and well made",
    "Arrived a day late but fine",
    "Routine check-up",
    "Follow-up consultation",
    "Replacement part for the kitchen",
)


def person(rng: random.Random) -> tuple[str, str]:
    """A first and last name (lower case)."""
    return rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)


def fresh_strings(variable: str, rng: random.Random, count: int, avoid: set[str]) -> list[str]:
    """``count`` realistic strings for ``variable`` that are not in ``avoid``."""
    out: list[str] = []
    attempts = 0
    while len(out) < count and attempts < count * 20:
        attempts += 1
        value = _one(variable.lower(), rng)
        if value not in avoid and value not in out:
            out.append(value)
    return out


def _one(name: str, rng: random.Random) -> str:
    first, last = person(rng)
    digits = "".join(rng.choice(string.digits) for _ in range(4))
    if "password" in name or "identification" in name or name.endswith("_id_number"):
        return f"{first.capitalize()}{rng.choice(('#', '!', '_', '.'))}{digits}"
    if "address" in name:
        return f"{rng.randint(2, 980)} {rng.choice(STREETS)}, {rng.choice(CITIES)}"
    if "guest" in name or "legal_name" in name or name.endswith("_name") and "user" not in name:
        return f"{first.capitalize()} {last.capitalize()}"
    if "user" in name or "owner" in name:
        return f"{first}_{last}"
    if "plate" in name:
        letters = "".join(rng.choice(string.ascii_uppercase) for _ in range(3))
        return f"{rng.randint(1, 9)}{letters}{digits[:3]}"
    if "vin" in name:
        alphabet = string.ascii_uppercase.replace("I", "").replace("O", "").replace("Q", "") + string.digits
        return "".join(rng.choice(alphabet) for _ in range(17))
    if "title" in name:
        return rng.choice(TITLES)
    if "description" in name or "comment" in name or "reason" in name:
        return rng.choice(PHRASES)
    if "form" in name:
        return f"Cheque no. {digits} drawn on {rng.choice(('Harbour Savings', 'Northfield Credit Union', 'Pinecrest Bank'))}"
    if "card" in name:
        return " ".join("".join(rng.choice(string.digits) for _ in range(4)) for _ in range(4))
    if "model" in name:
        return rng.choice(("Toyota Corolla", "Honda Civic", "Ford Focus", "Volkswagen Golf", "Mazda 3"))
    if "coupon" in name or "code" in name:
        return f"{rng.choice(('SAVE', 'SPRING', 'WELCOME', 'FLASH'))}{rng.randint(5, 40)}"
    if "currency" in name:
        return rng.choice(("CHF", "SEK", "NZD", "BRL", "ZAR", "KRW"))
    if "major" in name or "minor" in name:
        return rng.choice(("Linguistics", "Astronomy", "Marine Biology", "Philosophy", "Statistics"))
    if "course" in name:
        return f"{rng.choice(('PHY', 'LIN', 'ART', 'STA'))}{rng.randint(100, 499)}"
    if "room" in name:
        return str(rng.randint(500, 999))
    if "type" in name:
        return rng.choice(("penthouse", "bunk", "studio", "loft"))
    if name.endswith("id") or "_id" in name or "number" in name:
        prefix = "".join(rng.choice(string.ascii_uppercase) for _ in range(3))
        return f"{prefix}-{digits}"
    return f"{first}-{last}"
