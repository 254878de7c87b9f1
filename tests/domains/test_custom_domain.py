"""docs/custom-domain.md: the worked example builds and behaves as the page says."""

import contextlib
import io
import re
from pathlib import Path

import pytest

from sopbench.domains import (
    StrictSystem,
    default_dependencies,
    get_domain,
    published_offer,
    unregister_domain,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "custom-domain.md"


@pytest.fixture(scope="module")
def example():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) == 3
    namespace: dict = {}
    unregister_domain("pharmacy")
    exec(compile(blocks[0], str(DOC), "exec"), namespace)  # noqa: S102 - our own documentation
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(blocks[1], str(DOC), "exec"), namespace)  # noqa: S102
        exec(compile(blocks[2], str(DOC), "exec"), namespace)  # noqa: S102
    yield namespace, printed.getvalue().splitlines()
    unregister_domain("pharmacy")


def test_the_example_domain_is_complete_and_registered(example):
    namespace, _ = example
    pharmacy = namespace["pharmacy"]
    assert pharmacy.validate() == []
    assert get_domain("pharmacy") is pharmacy
    assert published_offer(pharmacy) == ["verify_patient", "get_prescriptions", "check_stock", "dispense"]


def test_the_page_prints_what_it_says(example):
    _, lines = example
    assert lines[0] == "True"
    assert lines[-3] == "['verify_patient', 'dispense'] True"
    assert lines[-2] == "['dispense', 'get_prescriptions', 'verify_patient']"
    assert lines[-1] == "False False"


def test_the_unverified_dispense_is_explained_at_its_step(example):
    namespace, _ = example
    score = namespace["score"]
    assert any("at step 2" in text and "patient_verified" in text for text in score.explanations)


def test_the_strict_oracle_refuses_an_unverified_dispense_and_allows_a_verified_one(example):
    namespace, _ = example
    pharmacy, database = namespace["pharmacy"], namespace["database"]
    oracle = StrictSystem(pharmacy, database, None, default_dependencies(pharmacy.catalogue))
    args = {"patient": "ana", "medicine": "amoxicillin", "units": 2}
    assert oracle.execute("dispense", args).raw is False
    assert oracle.execute("verify_patient", {"patient": "ana", "birth_date": "1990-04-01"}).ok
    assert oracle.execute("dispense", args).ok
    assert oracle.db["stock"]["amoxicillin"] == 3
    too_many = {**args, "units": 4}  # over the unit limit (and more than is left)
    assert oracle.execute("dispense", too_many).raw is False
