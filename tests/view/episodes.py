"""Small trajectory files for the viewer's tests, built from the shared synthetic record: one run
that passes, one that skips the login its SOP requires, and one whose messages carry markup."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from conftest import synthetic_record

FILE_NAME = "ast_gpt-4o-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"
OTHER_FILE_NAME = "ast_other-model-mode_react-dep_full-fmt_structured-tool_oracle-shuffle_False.json"

# What an injected message tries: run a script, load an image whose error handler runs one, follow a
# javascript: link. Each must show as text.
SCRIPT = "<script>window.__injected = 1; alert('script');</script>"
IMAGE = "<img src=x onerror=\"window.__injected = 2; fetch('/pwned-image')\">"
LINK = '<a href="javascript:alert(3)" id="injected-link">click me</a> [docs](javascript:alert(4))'
INJECTED_TEXTS = (SCRIPT, IMAGE, LINK)


def passing_record() -> dict:
    return synthetic_record()


def skipped_login_record() -> dict:
    """The balance is read without the login the SOP requires: the procedure fails at step 2."""
    record = synthetic_record()
    messages = record["interactions"][0]["interaction"]
    del messages[1:3]  # the login call and its answer
    return record


def injected_record() -> dict:
    """The passing conversation, with markup in what the user, the assistant and a tool wrote."""
    record = synthetic_record()
    messages = record["interactions"][0]["interaction"]
    messages[0]["content"] = f"Hi {SCRIPT} what is my balance?"
    messages[5]["content"] = f"Your balance is 10.0. {IMAGE} {LINK}"
    call = messages[3]["tool_calls"][0]["function"]
    call["arguments"] = json.dumps({"username": "alice", "note": "</pre>" + SCRIPT})
    return record


def write_trajectories(folder: Path) -> Path:
    """``folder/bank/<two files>``: three records in one file (pass, fail, injected), and a second
    configuration with a failing record; returns ``folder``."""
    (folder / "bank").mkdir(parents=True, exist_ok=True)
    records = [passing_record(), skipped_login_record(), injected_record()]
    (folder / "bank" / FILE_NAME).write_text(json.dumps(records))
    (folder / "bank" / OTHER_FILE_NAME).write_text(json.dumps([copy.deepcopy(skipped_login_record())]))
    return folder
