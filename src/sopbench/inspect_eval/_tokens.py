"""Token estimates that need no download.

Inspect's default estimate (``ModelAPI.count_text_tokens``) loads tiktoken's ``o200k_base``, which
tiktoken downloads on first use: with no network every ``mockllm`` generate call (it fills in its
usage with that estimate) raised, and so did every sample. A sopbench episode never needs the exact
count of a provider that does not report one, so a model that keeps Inspect's default is given a
local estimate instead: UTF-8 bytes over four (about what ``o200k_base`` gives for English and JSON),
with Inspect's own 10 % margin. Providers with a tokenizer of their own keep it.
"""

from __future__ import annotations

from inspect_ai.model import Model, ModelAPI

BYTES_PER_TOKEN = 4
MARGIN = 1.1  # Inspect's: an estimate that undercounts is worse than one that overcounts


def estimate_text_tokens(text: str) -> int:
    """A token estimate of ``text`` without a tokenizer (at least 1, like Inspect's)."""
    return max(1, int(len(text.encode("utf-8")) / BYTES_PER_TOKEN * MARGIN))


async def _count_text_tokens(text: str) -> int:
    return estimate_text_tokens(text)


def without_tokenizer_download(model: Model) -> Model:
    """``model``, its API counting text tokens locally when it keeps Inspect's downloading default."""
    api = model.api
    if type(api).count_text_tokens is ModelAPI.count_text_tokens and "count_text_tokens" not in vars(api):
        api.count_text_tokens = _count_text_tokens  # type: ignore[method-assign, unused-ignore]
    return model
