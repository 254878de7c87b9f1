"""The one scrubber takes a key out of a text in every form a server may echo it, and nothing else."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sopbench.secrets import MASK, Scrubber, redact_url, scrub_secret, url_credentials

sys.path.insert(0, str(Path(__file__).parent))
from key_forms import BASE64_SIDES, KEY, PIECES, forms_of  # noqa: E402

FORMS = forms_of(KEY)


@pytest.mark.parametrize("form", list(FORMS))
def test_every_form_of_the_key_is_masked_and_the_text_around_it_kept(form):
    text = f"Your key is {FORMS[form]}. Thanks"
    scrubbed = Scrubber([KEY])(text)
    assert MASK in scrubbed and scrubbed.startswith("Your key is ") and scrubbed.endswith(". Thanks")
    for piece in PIECES:
        assert piece not in scrubbed
    if form.startswith("base64"):  # no base64 group that mixes in a key bit is left
        leftover = scrubbed.removeprefix("Your key is ").removesuffix(". Thanks")
        before, _, after = leftover.partition(MASK)
        assert FORMS[form].startswith(before) and after.rstrip("=") in FORMS[form]
        # only characters made of the other bytes' own bits are left (6 bits a character)
        around_before, around_after = BASE64_SIDES[form]
        assert len(before) <= len(around_before) * 8 // 6
        assert len(after.rstrip("=")) <= -(-len(around_after) * 8 // 6)


@pytest.mark.parametrize("form", ["as sent", "json-escaped", "base64 b''+key+b''"])
def test_a_json_document_holding_a_form_stays_valid_json(form):
    document = json.dumps({"content": f"x {FORMS[form]} y", "n": 1})
    scrubbed = Scrubber([KEY])(document)
    assert json.loads(scrubbed) == {"content": f"x {MASK} y", "n": 1}


def test_texts_without_the_key_are_unchanged_and_placeholders_are_no_secrets():
    text = "none of the EMPTY sk-proj- keys; aGVsbG8gd29ybGQ= and %73%6b"
    assert Scrubber([KEY])(text) == text
    assert Scrubber(["none", "EMPTY", None, ""])(text) == text
    assert not Scrubber(["none", None])


@settings(max_examples=60, deadline=None)
@given(
    key=st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=0x2FFF), min_size=8, max_size=40),
    before=st.binary(max_size=5),
    after=st.binary(max_size=5),
)
@example(key="0000000\xa0", before=b"", after=b"")  # a no-break space is part of a key, not space around it
def test_any_key_is_masked_as_sent_escaped_and_in_base64(key, before, after):
    scrub = Scrubber([key])
    encoded = base64.b64encode(before + key.encode() + after).decode()
    for text in (key, json.dumps(key, ensure_ascii=True), quote(key, safe=""), encoded):
        scrubbed = scrub(f"<{text}>")
        assert MASK in scrubbed and key not in scrubbed


def test_several_secrets_and_json_values():
    scrub = Scrubber([KEY, "query-token-12345", None])
    value = {"a": [f"x{KEY}", ("query-token-12345",)], f"k{KEY}": 3, "n": None}
    assert scrub.value(value) == {"a": [f"x{MASK}", (MASK,)], f"k{MASK}": 3, "n": None}
    assert KEY not in repr(scrub)


def test_scrub_secret_takes_the_key_as_set_with_its_white_space():
    secret = "sk-a/b+c=d9f8e7 "
    echoed = f"key {secret.strip()} / {secret}/ url ?api_key={quote(secret.strip(), safe='')}&x=1"
    scrubbed = scrub_secret(echoed, secret)
    assert scrubbed.count(MASK) == 3 and "d9f8e7" not in scrubbed


def test_a_url_names_its_credentials_and_is_stored_without_them():
    url = "https://user:pa%2Fss-word-1@llm.example.invalid:8443/v1?api-key=abc%3Ddef-123&api-version=2024"
    assert url_credentials(url) == ["pa/ss-word-1", "abc=def-123"]
    assert redact_url(url) == "https://llm.example.invalid:8443/v1?api-key=***&api-version=2024"
