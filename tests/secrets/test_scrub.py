"""The one scrubber takes a key out of a text in every form a server may echo it, and nothing else."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sopbench.secrets import MASK, Scrubber, redact_url, scrub_secret, url_credentials

# a key with the characters that JSON and URLs escape ('/', '+', '=')
KEY = "sk-proj-Ab3/De+Fg9_hIjK-LmNoPq0RsTuVwXyZ12345678=="
# pieces of the key that are not the public "sk-proj-" prefix: none may survive a scrub
PIECES = ("Ab3", "hIjK", "LmNoPq", "RsTuVw", "12345678")


def json_escaped(text: str, upper: bool = False) -> str:
    return "".join(f"\\u{ord(c):04X}" if upper else f"\\u{ord(c):04x}" for c in text)


# bytes around the key in the base64 forms: (before, after) by form name
BASE64_SIDES: dict[str, tuple[bytes, bytes]] = {}


def base64_forms(key: str) -> dict[str, str]:
    """The key alone and inside longer base64 texts, at each of the 3 byte alignments, standard and
    URL-safe, with and without padding."""
    forms = {}
    for before in (b"", b"x", b"xy", b"Bearer ", b"user:", b'{"authorization": "'):
        for after in (b"", b"z", b"zz", b'", "more": "bytes"}'):
            raw = before + key.encode() + after
            for name, text in (
                (f"base64 {before!r}+key+{after!r}", base64.b64encode(raw).decode()),
                (
                    f"base64url {before!r}+key+{after!r} unpadded",
                    base64.urlsafe_b64encode(raw).decode().rstrip("="),
                ),
            ):
                forms[name] = text
                BASE64_SIDES[name] = (before, after)
    return forms


def forms_of(key: str) -> dict[str, str]:
    """Every form of ``key`` a reply may carry (the end-to-end test serves the same ones)."""
    return {
        "as sent": key,
        "bearer": f"Bearer {key}",
        "json-escaped": json_escaped(key),
        "json-escaped upper": json_escaped(key, upper=True),
        "escaped slashes": key.replace("/", "\\/"),
        "json string in a json string": json.dumps(json.dumps(key))[1:-1],
        "url-encoded": quote(key, safe=""),
        "url-encoded plus": quote_plus(key),
        "url-encoded every byte": "".join(f"%{b:02x}" for b in key.encode()),
        "url-encoded twice": quote(quote(key, safe=""), safe=""),
        "html entities": "".join(f"&#{ord(c)};" for c in key),
        "hex": key.encode().hex(),
        **base64_forms(key),
    }


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
