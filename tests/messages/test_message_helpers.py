"""Making and reading messages: `message`, `coerce_message`, `tool_calls_of` and the other readers."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

import actorgraph as ag
from actorgraph.messages import (
    RemoveMessage,
    coerce_message,
    content_of,
    id_of,
    last_message,
    message,
    role_of,
    tool_calls_of,
    tool_message,
)


def test_message_builds_the_common_form() -> None:
    call = {"id": "c1", "name": "add", "args": {"a": 1}}
    made = message("ai", "", tool_calls=[call], id="m1")
    assert made == {"role": "assistant", "content": "", "tool_calls": [call], "id": "m1"}


def test_message_refuses_a_removal_role() -> None:
    with pytest.raises(ag.InvalidUpdateError, match="use RemoveMessage"):
        message("remove", "", id="x")


def test_tool_message_answers_one_call() -> None:
    assert tool_message("3", "c1", "add") == {
        "role": "tool",
        "content": "3",
        "tool_call_id": "c1",
        "name": "add",
    }
    assert "name" not in tool_message("3", "c1")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("hi", {"role": "user", "content": "hi"}),
        (("human", "hi"), {"role": "user", "content": "hi"}),
        (["assistant", "yo"], {"role": "assistant", "content": "yo"}),
        ({"type": "ai", "content": "yo", "id": "1"}, {"role": "assistant", "content": "yo", "id": "1"}),
        ({"role": "assistant", "content": None}, {"role": "assistant", "content": ""}),
        ({"role": "user", "content": [{"type": "text", "text": "x"}]}, None),
    ],
)
def test_coerce_message_reads_message_likes(given: object, expected: dict | None) -> None:
    assert coerce_message(given) == (expected if expected is not None else given)


def test_a_message_in_the_common_form_is_kept_and_others_are_copied() -> None:
    kept = {"role": "user", "content": "a", "id": "1"}
    assert coerce_message(kept) is kept
    given = {"role": "human", "content": "a"}
    assert coerce_message(given) is not given and given == {"role": "human", "content": "a"}


def test_openai_tool_calls_are_read_as_the_common_form() -> None:
    openai = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}
        ],
    }
    assert coerce_message(openai)["tool_calls"] == [{"id": "c1", "name": "add", "args": {"a": 1}}]
    assert tool_calls_of(openai) == [{"id": "c1", "name": "add", "args": {"a": 1}}]
    bad = {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": "{"}}]}
    with pytest.raises(ag.InvalidUpdateError, match="arguments that are not JSON"):
        coerce_message(bad)


def test_a_removal_is_coerced_to_remove_message() -> None:
    assert coerce_message({"role": "remove", "id": "7"}) == RemoveMessage("7")
    assert role_of(RemoveMessage("7")) == "remove" and id_of(RemoveMessage("7")) == "7"


def test_readers_take_dicts_and_message_likes() -> None:
    m = {"role": "ai", "content": "x", "id": "9"}
    assert (role_of(m), content_of(m), id_of(m), tool_calls_of(m)) == ("assistant", "x", "9", [])
    assert (role_of("hi"), content_of(("user", "hi")), id_of("hi")) == ("user", "hi", None)


def test_last_message_of_a_state_a_list_or_an_object() -> None:
    a, b = message("user", "a"), message("assistant", "b")

    @dataclasses.dataclass
    class State:
        messages: list

    assert last_message({"messages": [a, b]}) is b
    assert last_message([a, b]) is b
    assert last_message(State([a])) is a
    assert last_message({"chat": [a]}, key="chat") is a
    with pytest.raises(ag.InvalidUpdateError, match="holds no messages under 'messages'"):
        last_message({"messages": []})


@pytest.mark.slow
def test_the_package_does_not_import_langchain_core() -> None:
    code = "import sys, actorgraph, actorgraph.messages; print('langchain_core' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_messages_and_removals_pass_the_safe_serializer_without_configuration() -> None:
    from actorgraph.checkpoint import MsgpackSerializer

    value = {"messages": [message("user", "hi", id="1")], "pending": [RemoveMessage("1")]}
    back = MsgpackSerializer().loads(MsgpackSerializer().dumps(value))
    assert back == value and type(back["pending"][0]) is RemoveMessage
