"""Graphs from YAML: `actorgraph.load` / `load_string`, and every problem located in the file."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from config_cases import BROKEN

import actorgraph as ag
from actorgraph._api.files.loading import json_schema

RISK = """\
name: risk
state:
  raw: str
  parsed: str
  verdict: str
  outcome: str
global:
  rules: {min_length: 4}
vertices:
  - id: parse
    fn: config_vertices:parse
    inputs: {raw: flow.raw}
    outputs: [parsed]
  - id: check
    fn: config_vertices:check
    inputs: {user: flow.parsed, rules: global.rules}
    outputs: {verdict: verdict}
  - id: approve
    fn: config_vertices:approve
    returns: update
  - id: review
    fn: config_vertices:review
    returns: update
edges:
  - {source: __start__, target: parse}
  - {source: parse, target: check}
  - source: check
    condition: flow.verdict
    mappings: {pass: approve, reject: review}
  - {source: approve, target: __end__}
  - {source: review, target: __end__}
"""


def loaded(text: str, **compile_options: Any) -> ag.CompiledGraph:
    return ag.load_string(textwrap.dedent(text), file="flow.yaml").compile(**compile_options)


def test_a_file_with_data_flow_globals_and_a_mapped_condition_runs() -> None:
    with loaded(RISK) as app:
        assert app.invoke({"raw": "  ADA LOVELACE "}).state["outcome"] == "approved"
        result = app.invoke({"raw": "Al"})
    assert result.state == {"raw": "Al", "parsed": "al", "verdict": "reject", "outcome": "manual review"}


def test_load_reads_a_file_and_its_folder_is_importable(tmp_path: Path) -> None:
    (tmp_path / "my_steps.py").write_text("def double(state):\n    return {'n': state['n'] * 2}\n")
    (tmp_path / "flow.yaml").write_text(
        "vertices:\n  - {id: d, fn: my_steps:double, returns: update}\n"
        "edges:\n  - {source: __start__, target: d}\n  - {source: d, target: __end__}\n"
    )
    with ag.load(tmp_path / "flow.yaml").compile() as app:
        assert app.invoke({"n": 21}).state == {"n": 42}


def test_sends_reducers_and_an_expression_condition() -> None:
    text = """\
        state:
          words: list
          word: {type: str, reducer: replace}
          lengths: {type: list, reducer: append}
        vertices:
          - {id: split, fn: config_vertices:passthrough}
          - {id: word, fn: config_vertices:word, returns: update}
        edges:
          - {source: __start__, target: split}
          - source: split
            send: {to: word, each: flow.words, as: word}
          - source: word
            condition: "'__end__'"
    """
    with loaded(text) as app:
        state = app.invoke({"words": ["a", "bb", "ccc"], "lengths": []}).state
    assert sorted(state["lengths"]) == [1, 2, 3]


def test_breakpoints_and_interrupts_from_the_file() -> None:
    text = """\
        vertices:
          - {id: ask, fn: config_vertices:ask, returns: update}
          - {id: approve, fn: config_vertices:approve, returns: update}
        edges:
          - {source: __start__, target: ask}
          - {source: ask, target: approve}
          - {source: approve, target: __end__}
        interrupt_before: [approve]
    """
    with loaded(text, checkpointer=ag.checkpoint.MemoryCheckpointer()) as app:
        assert app.invoke({}, thread_id="t").status == "interrupted"  # ask's interrupt
        assert app.invoke(ag.Command(resume="yes"), thread_id="t").status == "interrupted"  # before approve
        result = app.invoke(None, thread_id="t")
    assert result.status == "done" and result.state == {"answer": "yes", "outcome": "approved"}


@pytest.mark.parametrize(("defer", "gathered"), [("true", [4]), ("false", [1, 3])])
def test_a_deferred_aggregator_from_the_file_runs_once_after_uneven_branches(
    defer: str, gathered: list[int]
) -> None:
    text = f"""\
        state:
          log: {{type: list, reducer: append}}
          gathered: {{type: list, reducer: append}}
        returns: update
        vertices:
          - {{id: a, fn: config_vertices:step}}
          - {{id: b1, fn: config_vertices:step}}
          - {{id: b2, fn: config_vertices:step}}
          - {{id: b3, fn: config_vertices:step}}
          - {{id: agg, fn: config_vertices:gather, defer: {defer}}}
        edges:
          - {{source: __start__, target: a}}
          - {{source: __start__, target: b1}}
          - {{source: b1, target: b2}}
          - {{source: b2, target: b3}}
          - {{source: a, target: agg}}
          - {{source: b3, target: agg}}
          - {{source: agg, target: __end__}}
    """
    with loaded(text) as app:
        assert app.invoke({"log": [], "gathered": []}).state["gathered"] == gathered


def test_retry_policies_from_the_file_name_exception_classes() -> None:
    graph = ag.load_string(
        "retry: {max_attempts: 2, retry_on: [ValueError]}\n"
        "vertices:\n  - id: v\n    fn: config_vertices:approve\n"
        "    retry:\n      - max_attempts: 5\n        initial_interval: 0\n"
        "        retry_on: [builtins.ConnectionError, KeyError]\n"
        "edges:\n  - {source: __start__, target: v}\n  - {source: v, target: __end__}\n"
    )
    (policy,) = graph._vertices["v"].retry or ()
    assert (policy.max_attempts, policy.retry_on) == (5, (ConnectionError, KeyError))
    assert graph.retry[0].retry_on == (ValueError,)


def test_the_json_schema_describes_the_format() -> None:
    schema = json_schema()
    assert schema["title"] == "actorgraph graph file"
    assert {"vertices", "edges", "global", "state", "interrupt_before"} <= set(schema["properties"])
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == {"vertices", "edges"}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_every_problem_names_the_file_line_and_column(case: str) -> None:
    text, expected = BROKEN[case]
    with pytest.raises(ag.ConfigFileError, match=expected):
        ag.load_string(text, file="flow.yaml")


def test_several_problems_are_all_reported() -> None:
    text = "vertices:\n  - {id: v, fn: config_vertices:approve, colour: red}\nedges: []\nextra: 1\n"
    with pytest.raises(ag.ConfigFileError) as info:
        ag.load_string(text, file="flow.yaml")
    message = str(info.value)
    assert "unknown field 'colour'" in message and "unknown field 'extra'" in message
    assert "flow.yaml:3:8" in message  # edges: [] is too short


def test_a_missing_file_is_a_config_file_error(tmp_path: Path) -> None:
    with pytest.raises(ag.ConfigFileError, match=r"nope\.yaml: cannot read the graph file"):
        ag.load(tmp_path / "nope.yaml")


def test_the_configuration_reference_is_generated_from_the_schema() -> None:
    import config_reference

    assert config_reference.PAGE.read_text() == config_reference.render(), (
        "docs/reference/configuration.md is stale: run python tests/config_reference.py"
    )


def test_the_approval_flow_as_yaml_runs_as_the_python_one() -> None:
    import importlib.util

    examples = Path(__file__).resolve().parents[2] / "examples"
    spec = importlib.util.spec_from_file_location("approval_example", examples / "approval.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    answers = [{"approved": False, "feedback": "mention the fix"}, {"approved": True}]
    finals = []
    for graph in (ag.load(examples / "approval.yaml"), module.build()):
        with graph.compile(ag.checkpoint.MemoryCheckpointer()) as app:
            result = app.invoke({"topic": "release notes"}, thread_id="t")
            for answer in answers:
                assert result.status == "interrupted"
                result = app.invoke(ag.Command(resume=answer), thread_id="t")
        finals.append(result)
    assert finals[0].status == finals[1].status == "done"
    assert finals[0].state == finals[1].state
    assert finals[0].state["status"] == "published" and finals[0].state["revision"] == 2


def test_every_import_and_edge_problem_is_reported_at_once() -> None:
    text = (
        "vertices:\n  - {id: a, fn: config_vertices:nope}\n  - {id: b, fn: no_such_module:run}\n"
        "edges:\n  - {source: __start__, target: a}\n  - {source: a, target: c}\n"
        "  - {source: b, condition: 'len(flow.x)'}\n"
    )
    with pytest.raises(ag.ConfigFileError) as info:
        ag.load_string(text, file="flow.yaml")
    message = str(info.value)
    assert message.startswith("flow.yaml:2:17: module 'config_vertices' has no 'nope'")
    assert "(3 more problem(s))" in message
    assert "flow.yaml:3:17: cannot import module 'no_such_module'" in message
    assert "flow.yaml:6:5: edge names unknown vertex 'c'" in message
    assert "flow.yaml:7:29: calls are not allowed" in message
