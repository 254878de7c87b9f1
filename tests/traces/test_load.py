"""Trajectory files: every published one loads; broken input gives one located error, never a crash."""

from __future__ import annotations

import collections
import gzip
import logging
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import pytest

from sopbench.traces import (
    LoadError,
    Message,
    Record,
    Run,
    ToolCallRecord,
    VerdictLayout,
    detect_output_format,
    is_tuple_output,
    iter_records,
    iter_trajectory_files,
    parse_trajectory_file_name,
    record_from_json,
)

PUBLISHED_RUNS = {"bank": 3590, "dmv": 2900, "healthcare": 3599, "library": 2159, "university": 2319}
ARGUMENTS_FIELD = "interactions[0].interaction[{}].tool_calls[0].function.arguments"


def write_json(path: Path, content: object, *, compress: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = orjson.dumps(content)
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


# -- the published files: one pass, summarised (holding every record would take gigabytes) ------------


@dataclass
class PublishedSummary:
    files: int = 0
    records: collections.Counter = field(default_factory=collections.Counter)
    records_with_runs: collections.Counter = field(default_factory=collections.Counter)
    runs: collections.Counter = field(default_factory=collections.Counter)
    output_formats: dict[str, str] = field(default_factory=dict)  # "<domain>/<file>" -> format
    verdict_layouts: collections.Counter = field(default_factory=collections.Counter)
    verdicts: int = 0
    verdicts_inconsistent: int = 0
    verdict_goal_mismatches: int = 0
    argument_problems: int = 0
    unanswered_calls: collections.Counter = field(default_factory=collections.Counter)  # by tool name
    name_mismatches: list[str] = field(default_factory=list)


def _summarise_file(path: Path, summary: PublishedSummary) -> None:
    config = parse_trajectory_file_name(path)
    records = list(iter_records(path))
    summary.files += 1
    summary.output_formats[f"{path.parent.name}/{path.name}"] = detect_output_format(records)
    for record in records:
        summary.records[record.domain] += 1
        summary.records_with_runs[record.domain] += bool(record.runs)
        summary.runs[record.domain] += len(record.runs)
        summary.argument_problems += len(record.problems)
        if record.domain != config.domain or record.setup.tool_list != config.tool_list:
            summary.name_mismatches.append(f"{path.name}: record {record.index}")
        for verdict in record.evaluations:
            summary.verdicts += 1
            summary.verdict_layouts[verdict.layout] += 1
            summary.verdict_goal_mismatches += verdict.user_goal != record.task.goal
            checks = (
                verdict.no_tool_call_error,
                verdict.constraint_not_violated,
                verdict.database_match,
                verdict.action_called_correctly,
                verdict.dirgraph_satisfied,
            )
            summary.verdicts_inconsistent += verdict.success != all(checks)
        for run in record.runs:
            for step in run.tool_steps():
                if step.output_text is None:
                    summary.unanswered_calls[step.call.name] += 1


@pytest.fixture(scope="module")
def published(published_trajectories_dir: Path) -> PublishedSummary:
    summary = PublishedSummary()
    for path in iter_trajectory_files(published_trajectories_dir):
        _summarise_file(path, summary)
    return summary


def test_every_published_trajectory_loads(published: PublishedSummary) -> None:
    # "Trajectories" are runs: a record (one task) holds 0, 1 or (university, 3 runs per task) 3 runs.
    assert published.files == 146
    assert dict(published.runs) == PUBLISHED_RUNS
    assert sum(published.runs.values()) == 14567
    assert sum(published.records.values()) == 14152
    assert sum(published.records_with_runs.values()) == 13823
    assert published.records["university"] == published.records_with_runs["university"] == 1575


def test_file_names_agree_with_records(published: PublishedSummary) -> None:
    assert published.name_mismatches == []


def test_both_output_formats_occur(published: PublishedSummary) -> None:
    formats = collections.Counter(published.output_formats.values())
    assert formats == {"tuple": 90, "value": 56}
    # every university run is in the newer format; dmv has both
    assert {f for name, f in published.output_formats.items() if name.startswith("university/")} == {"value"}
    assert {f for name, f in published.output_formats.items() if name.startswith("dmv/")} == {
        "tuple",
        "value",
    }


def test_both_verdict_layouts_are_normalised(published: PublishedSummary) -> None:
    assert published.verdict_layouts == {VerdictLayout.LEGACY: 8434, VerdictLayout.CURRENT: 4397}
    assert published.verdicts == 12831
    assert published.verdict_goal_mismatches == 0
    assert published.verdicts_inconsistent == 0


def test_published_tool_calls(published: PublishedSummary) -> None:
    # Non-JSON arguments (mostly ReAct "N/A" pseudo-calls) are kept on the calls and listed as problems.
    assert published.argument_problems == 1274
    # Unanswered calls: the final exit_conversation, and pseudo-calls the simulator did not execute.
    assert published.unanswered_calls.most_common(1)[0][0] == "exit_conversation"


@pytest.mark.parametrize(
    ("tool_list", "layout", "tool_list_in_setup"),
    [("oracle", VerdictLayout.LEGACY, "oracle"), ("full", VerdictLayout.CURRENT, "full")],
)
def test_published_records_of_both_vintages(
    published_trajectories_dir: Path, tool_list: str, layout: VerdictLayout, tool_list_in_setup: str
) -> None:
    name = f"ast_gpt-4o-mini-mode_fc-dep_full-fmt_structured-tool_{tool_list}-shuffle_False.json.gz"
    path = published_trajectories_dir / "bank" / name
    record = next(iter(iter_records(path)))
    verdict = record.evaluations[0]
    assert (record.file, record.index, record.domain) == (path, 0, "bank")
    assert (verdict.layout, verdict.user_goal) == (layout, record.task.goal)
    assert isinstance(verdict.action_should_succeed, bool)
    assert (verdict.num_constraints is None) == (layout is VerdictLayout.LEGACY)
    assert verdict.raw["action_should_succeed"] in (0, 1)  # stored as 0/1 in both
    assert record.setup.tool_list == tool_list_in_setup
    assert record.setup.assistant_agent is not None and record.setup.assistant_agent.model == "gpt-4o-mini"
    assert record.runs[0].messages[0].is_user


# -- file names and folders ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "ast_claude-3-5-sonnet-20241022-mode_act-only-dep_full-fmt_structured-tool_full-shuffle_False.json.gz",
            ("claude-3-5-sonnet-20241022", "act-only", None, "full", "structured", "full", False),
        ),
        (
            "usr_gpt-4o-ast_llama3.1-70b-it-fireworks-mode_react-dep_full-fmt_structured-tool_oracle-shuffle_True.json",
            ("llama3.1-70b-it-fireworks", "react", "gpt-4o", "full", "structured", "oracle", True),
        ),
        (
            "usr_adv-ast_gemini-2.0-flash-thinking-exp-mode_fc-dep_required-fmt_natural-tool_test-shuffle_False.json",
            ("gemini-2.0-flash-thinking-exp", "fc", "adv", "required", "natural", "oracle", False),
        ),
    ],
)
def test_file_names_are_parsed(name: str, expected: tuple) -> None:
    config = parse_trajectory_file_name(Path("output/bank") / name)
    assert config.domain == "bank"
    assert (
        config.assistant_model,
        config.tool_call_mode,
        config.user_model,
        config.default_constraint_option,
        config.constraint_descr_format,
        config.tool_list,
        config.shuffle,
    ) == expected


def test_a_foreign_file_name_is_a_load_error() -> None:
    with pytest.raises(LoadError, match=r"^bank/results.json: file name does not follow"):
        parse_trajectory_file_name("bank/results.json")


def test_folders_are_expanded_recursively_and_sorted(tmp_path: Path) -> None:
    for name in ("dmv/b.json.gz", "bank/z.json", "bank/a.json", "bank/notes.csv", "bank/deep/c.json"):
        write_json(tmp_path / name, [])
    single = write_json(tmp_path / "elsewhere.json", [])
    found = [
        p.relative_to(tmp_path).as_posix()
        for p in iter_trajectory_files([single, tmp_path, tmp_path / "bank"])
    ]
    # each file once, however often it is reached
    assert found == ["elsewhere.json", "bank/a.json", "bank/deep/c.json", "bank/z.json", "dmv/b.json.gz"]


# -- synthetic records ---------------------------------------------------------------------------------


def test_a_synthetic_record_is_typed(tmp_path: Path, make_record) -> None:
    path = write_json(tmp_path / "bank" / "run.json.gz", [make_record()], compress=True)
    (record,) = iter_records(path)
    assert isinstance(record, Record)
    assert record.setup.assistant_agent is not None
    assert (record.setup.assistant_agent.model, record.setup.assistant_agent.temperature) == ("gpt-4o", 0.0)
    assert record.setup.user_agent is None
    assert (
        record.task.goal == "get_account_balance"
        and record.task.index is None
        and record.task.domain == "bank"
    )
    assert record.statistics == {"total_interactions": 1, "total_success": 1}
    assert record.problems == ()
    (run,) = record.runs
    assert run.final_database["accounts"]["alice"]["balance"] == 10.0
    assert [m.sender for m in run.messages[:3]] == ["user", "bank assistant", None]
    assert run.messages[1].extra == {"thinking": "log in first"}  # null backend fields are dropped
    assert run.messages[2].is_tool and run.messages[2].tool_name == "login_user"
    login = run.messages[1].tool_calls[0]
    assert login == ToolCallRecord(
        "c1",
        "login_user",
        '{"username": "alice", "identification": "pw"}',
        {"username": "alice", "identification": "pw"},
    )
    assert [(step.call.name, step.output_text) for step in run.tool_steps()] == [
        ("login_user", "(True, True)"),
        ("get_account_balance", "(True, 10.0)"),
        ("exit_conversation", None),
    ]
    assert detect_output_format([record]) == "tuple"


def test_old_setup_names_and_missing_setup_keys(make_record) -> None:
    raw = make_record()
    raw["setup"] = {"tool_list": "test", "assistant_agent": {"model": "m"}}
    record = record_from_json(raw)
    assert record.setup.tool_list == "oracle"  # old files call the oracle tool list "test"
    assert record.setup.env_mode is None
    assert record.setup.assistant_agent is not None and record.setup.assistant_agent.temperature is None


def test_both_verdict_layouts(make_record) -> None:
    raw = make_record()
    current = dict(
        raw["evaluations"][0], num_constraints=1, num_constraints_expanded=2, action_should_succeed=True
    )
    raw["evaluations"].append(current)
    legacy, newer = record_from_json(raw).evaluations
    assert (legacy.layout, legacy.num_constraints, legacy.action_should_succeed) == (
        VerdictLayout.LEGACY,
        None,
        True,
    )
    assert (newer.layout, newer.num_constraints, newer.num_constraints_expanded) == (
        VerdictLayout.CURRENT,
        1,
        2,
    )
    assert newer.raw is current


def test_value_format_is_detected(make_record) -> None:
    raw = make_record()
    for message in raw["interactions"][0]["interaction"]:
        if "tool_call_id" in message:
            message["content"] = message["content"].removeprefix("(True, ").removesuffix(")")
    assert detect_output_format([record_from_json(raw)]) == "value"
    assert detect_output_format([]) == "value"
    assert is_tuple_output("(False, {})") and not is_tuple_output("KeyError: 'bob'")


def test_tool_steps_pair_by_id_then_by_position() -> None:
    def call(call_id: str | None, name: str) -> ToolCallRecord:
        return ToolCallRecord(call_id, name, "{}", {})

    def answer(call_id: str | None, text: str) -> Message:
        return Message(sender=None, content=text, tool_call_id=call_id, tool_name="t")

    messages = (
        Message("a", None, (call("x", "first"), call("y", "second"), call(None, "third"))),
        answer("y", "to second"),
        answer("other", "to first"),
        answer("x", "to... first after all"),
        Message("user", "ok"),
        answer("z", "orphan: no call asked for it"),
        Message("a", None, (call("n", "N/A"),)),
        Message("user", "again"),
    )
    steps = Run(0, "", messages, {}).tool_steps()
    assert [(s.call.name, s.output_text) for s in steps] == [
        ("first", "to... first after all"),
        ("second", "to second"),
        ("third", "to first"),
        ("N/A", None),
    ]


# -- broken input: one error naming file, record and field ----------------------------------------------


def test_record_missing_task(tmp_path: Path, make_record) -> None:
    broken = make_record()
    del broken["task"]
    path = write_json(tmp_path / "bank" / "foo.json", [make_record(), broken])
    with pytest.raises(LoadError) as caught:
        list(iter_records(path))
    error = caught.value
    assert str(error) == 'bank/foo.json: record 1: field "task": missing'
    assert (error.file, error.record, error.field) == (path, 1, "task")


@pytest.mark.parametrize(
    ("damage", "field", "message"),
    [
        (lambda r: r.pop("domain"), "domain", "missing"),
        (lambda r: r.update(setup=[]), "setup", "expected an object, got a list"),
        (lambda r: r["task"].pop("user_goal"), "task.user_goal", "missing"),
        (lambda r: r["task"].update(constraints=["single"]), "task.constraints", None),
        (lambda r: r["interactions"][0].pop("database"), "interactions[0].database", "missing"),
        (
            lambda r: r["interactions"][0]["interaction"][2].pop("tool_name"),
            "interactions[0].interaction[2].sender",
            None,
        ),
        (
            lambda r: r["interactions"][0]["interaction"][4].update(content=7),
            "interactions[0].interaction[4].content",
            "expected a string, got an integer",
        ),
        (
            lambda r: r["interactions"][0]["interaction"][1]["tool_calls"][0]["function"].update(
                arguments=None
            ),
            "interactions[0].interaction[1].tool_calls[0].function.arguments",
            "expected a string, got null",
        ),
        (lambda r: r["evaluations"][0].update(success="yes"), "evaluations[0].success", None),
        (
            lambda r: r["evaluations"][0].update(action_should_succeed=None),
            "evaluations[0].action_should_succeed",
            None,
        ),
        (lambda r: r.update(statistics=[1]), "statistics", "expected an object, got a list"),
    ],
)
def test_a_damaged_record_names_its_field(make_record, damage, field: str, message: str | None) -> None:
    raw = make_record()
    damage(raw)
    with pytest.raises(LoadError) as caught:
        record_from_json(raw, file="output/bank/run.json", index=4)
    error = caught.value
    assert (error.record, error.field) == (4, field)
    assert str(error).startswith(f'bank/run.json: record 4: field "{field}": ')
    if message is not None:
        assert error.message == message


def test_non_json_arguments_are_kept_for_scoring(tmp_path: Path, make_record) -> None:
    raw = make_record()
    calls = [m for m in raw["interactions"][0]["interaction"] if m.get("tool_calls")]
    calls[0]["tool_calls"][0]["function"]["arguments"] = '{"username": "alice"}\n```\nAction: login_user'
    calls[1]["tool_calls"][0]["function"]["arguments"] = '["alice"]'
    path = write_json(tmp_path / "bank" / "foo.json.gz", [raw], compress=True)

    (record,) = iter_records(path)
    bad_text, not_object = [m.tool_calls[0] for m in record.runs[0].messages if m.tool_calls][:2]
    assert bad_text.arguments is None and bad_text.arguments_error is not None
    assert bad_text.arguments_error.startswith("not valid JSON (")
    assert bad_text.arguments_text.startswith('{"username": "alice"}\n')
    assert (not_object.arguments, not_object.arguments_error) == (None, "JSON list, not an object")
    first, second = record.problems
    assert str(first).startswith(f'bank/foo.json.gz: record 0: field "{ARGUMENTS_FIELD.format(1)}": ')
    assert "\n" not in str(first)
    assert (second.record, second.field) == (0, ARGUMENTS_FIELD.format(3))


def test_file_level_errors(tmp_path: Path, make_record) -> None:
    truncated = tmp_path / "bank" / "cut.json.gz"
    truncated.parent.mkdir()
    truncated.write_bytes(gzip.compress(orjson.dumps([make_record()] * 3))[:-40])
    with pytest.raises(LoadError, match=r"^bank/cut.json.gz: truncated or corrupt gzip data \(") as caught:
        list(iter_records(truncated))
    assert (caught.value.record, caught.value.field) == (None, None)

    invalid = tmp_path / "bank" / "bad.json"
    invalid.write_text('[{"domain": "bank",')
    with pytest.raises(LoadError, match=r"^bank/bad.json: invalid JSON \("):
        list(iter_records(invalid))

    not_a_list = write_json(tmp_path / "bank" / "obj.json", {"records": []})
    with pytest.raises(LoadError, match=r"^bank/obj.json: expected a JSON list of records, got an object$"):
        list(iter_records(not_a_list))

    with pytest.raises(LoadError, match=r"^bank/missing.json: cannot read file"):
        list(iter_records(tmp_path / "bank" / "missing.json"))


def test_null_and_empty_files_have_no_records(tmp_path: Path) -> None:
    assert list(iter_records(write_json(tmp_path / "null.json", None))) == []
    assert list(iter_records(write_json(tmp_path / "empty.json.gz", [], compress=True))) == []


def test_keep_going_skips_bad_records_and_files(tmp_path: Path, make_record) -> None:
    missing_task = make_record()
    del missing_task["task"]
    write_json(tmp_path / "bank" / "a.json", [make_record(), missing_task, "not a record", make_record()])
    (tmp_path / "bank" / "b.json.gz").write_bytes(gzip.compress(b"[]")[:-3])
    write_json(tmp_path / "bank" / "c.json", [make_record()])

    errors: list[LoadError] = []
    records = list(iter_records(tmp_path, keep_going=True, on_error=errors.append))
    assert [(r.file.name if r.file else None, r.index) for r in records] == [
        ("a.json", 0),
        ("a.json", 3),
        ("c.json", 0),
    ]
    assert [str(e) for e in errors[:2]] == [
        'bank/a.json: record 1: field "task": missing',
        "bank/a.json: record 2: expected an object, got a string",
    ]
    assert str(errors[2]).startswith("bank/b.json.gz: truncated or corrupt gzip data")
    assert len(errors) == 3 and errors[2].file == tmp_path / "bank" / "b.json.gz" and errors[2].record is None

    with pytest.raises(LoadError, match="record 1"):
        list(iter_records(tmp_path))


def test_keep_going_logs_when_no_handler_is_given(tmp_path: Path, make_record, caplog) -> None:
    write_json(tmp_path / "bank" / "a.json", [{"domain": "bank"}])
    with caplog.at_level(logging.WARNING, logger="sopbench.traces._load"):
        assert list(iter_records(tmp_path, keep_going=True)) == []
    assert 'bank/a.json: record 0: field "setup": missing' in caplog.text


def test_absurdly_deep_input_is_a_load_error_not_a_crash(make_record) -> None:
    raw = make_record()
    expression: list = ["single", "logged_in_user", None]
    for _ in range(5000):
        expression = ["and", [expression]]
    raw["task"]["constraints"] = expression
    raw["interactions"][0]["interaction"][1]["tool_calls"][0]["function"]["arguments"] = "[" * 100_000
    with pytest.raises(LoadError, match=r"^bank/x.json: record 0: nested too deeply to load$"):
        record_from_json(raw, file="bank/x.json")
    raw["task"]["constraints"] = None
    call = record_from_json(raw).runs[0].messages[1].tool_calls[0]
    assert (call.arguments, call.arguments_error) == (None, "JSON nested deeper than 64 levels")


def test_a_record_given_its_task_holds_that_task_and_reads_the_rest_alike(make_record) -> None:
    raw = make_record()
    parsed = record_from_json(raw)
    given = record_from_json(raw, task=parsed.task)
    assert given.task is parsed.task
    assert (given.domain, given.setup, given.runs, given.evaluations) == (
        parsed.domain,
        parsed.setup,
        parsed.runs,
        parsed.evaluations,
    )
    del raw["task"]  # the record must still carry its task object: the given task does not stand in
    with pytest.raises(LoadError, match="task"):
        record_from_json(raw, task=parsed.task)


def test_files_embedding_one_task_share_it_but_data_a_caller_built_is_read_as_given(
    tmp_path: Path, make_record
) -> None:
    raw = make_record()
    raw["task"]["user_known"] = {"accounts": ["a", "b"]}
    write_json(tmp_path / "bank" / "gpt-4o_fc_full_none_user.json", [raw])
    write_json(tmp_path / "bank" / "gpt-4o_react_full_none_user.json", [raw])
    first, second = iter_records(tmp_path)
    assert first.task is second.task  # one parse, one object, for every file that embeds the task
    # Built in Python, the same task with a tuple where the files have a list: written as JSON its
    # bytes are the files', yet it is other data, and the record holds what the caller gave.
    built = make_record()
    built["task"]["user_known"] = {"accounts": ("a", "b")}
    from_python = record_from_json(built)
    assert from_python.task is not first.task
    assert from_python.task.user_known == {"accounts": ("a", "b")}
    assert record_from_json(built).task is from_python.task  # the caller's data is remembered too
