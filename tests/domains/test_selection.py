"""The one parser of a domain selection (``--domain``, ``diagnose --tasks``): ``all``, or names
separated by commas, custom domains included."""

import pytest

from sopbench.domains import (
    PUBLISHED_DOMAINS,
    Catalogue,
    Domain,
    UnknownDomainSelection,
    domain_selection,
    known_domains,
    register_domain,
    select_domains,
)

CUSTOM = "selection_test_counter"


def custom_domain() -> Domain:
    catalogue = Catalogue.from_dict(
        {
            "domain": CUSTOM,
            "tools": [{"name": "count", "signature": [], "params": [], "required": []}],
            "innate_dependencies": {"count": None},
            "required_dependencies": {"count": None},
        }
    )
    return register_domain(Domain(CUSTOM, catalogue), replace=True)


def test_all_is_the_published_domains_in_their_order():
    assert select_domains("all") == list(PUBLISHED_DOMAINS)
    assert domain_selection("all") == ("all",)  # what all means is up to the reader (the runner: every file)


def test_names_are_split_trimmed_and_kept_once_in_their_order():
    assert select_domains(" dmv,bank ,, dmv") == ["dmv", "bank"]
    assert domain_selection("dmv, bank,dmv") == ("dmv", "bank")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bnak", "unknown domain bnak; known: all, bank, dmv, healthcare, online_market"),
        ("bank,casino,moon", "unknown domain casino, moon; known: all, bank"),
        (" , ", "no domain given; known: all, bank"),
        ("all,bank", "all stands alone"),
    ],
)
def test_a_bad_selection_names_what_is_wrong_and_what_is_known(text, message):
    with pytest.raises(UnknownDomainSelection) as error:
        select_domains(text)
    assert str(error.value).startswith(message)
    assert isinstance(error.value, ValueError)


def test_a_selection_can_be_narrowed_to_some_domains():
    custom_domain()
    assert select_domains("hotel", among=PUBLISHED_DOMAINS) == ["hotel"]
    with pytest.raises(UnknownDomainSelection, match=f"unknown domain {CUSTOM}; known: all, bank,"):
        select_domains(CUSTOM, among=PUBLISHED_DOMAINS)


def test_a_registered_custom_domain_is_selected_like_a_published_one():
    custom_domain()
    assert select_domains(f"bank,{CUSTOM}") == ["bank", CUSTOM]
    assert known_domains()[: len(PUBLISHED_DOMAINS)] == list(PUBLISHED_DOMAINS)
    assert CUSTOM in known_domains()
    assert select_domains("all") == list(PUBLISHED_DOMAINS)  # all stays the published set
