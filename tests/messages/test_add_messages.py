"""The `add_messages` apply rule: LangGraph's examples, ported to message dicts."""

from __future__ import annotations

import uuid

import pytest

import actorgraph as ag
from actorgraph.merge import Reducer
from actorgraph.messages import REMOVE_ALL_MESSAGES, RemoveMessage, add_messages, message, role_of


def user(content: str, id: str | None = None) -> dict:  # noqa: A002 - the message field's name
    return message("user", content, **({"id": id} if id else {}))


def ai(content: str, id: str | None = None) -> dict:  # noqa: A002
    return message("assistant", content, **({"id": id} if id else {}))


def system(content: str, id: str) -> dict:  # noqa: A002
    return message("system", content, id=id)


def contents(messages: list) -> list:
    return [m["content"] for m in messages]


def test_it_is_a_reducer_with_an_apply_rule_and_a_merge_rule() -> None:
    assert isinstance(add_messages, Reducer)
    assert add_messages.merge([], [[user("a", "1")]]) == [user("a", "1")]


def test_one_message_is_appended() -> None:
    assert add_messages([user("Hello", "1")], ai("Hi there!", "2")) == [
        user("Hello", "1"),
        ai("Hi there!", "2"),
    ]


def test_several_messages_are_appended_in_order() -> None:
    got = add_messages([user("Hello", "1")], [ai("Hi there!", "2"), system("System message", "3")])
    assert got == [user("Hello", "1"), ai("Hi there!", "2"), system("System message", "3")]


def test_a_message_with_a_present_id_replaces_it_in_place() -> None:
    got = add_messages([user("a", "1"), ai("b", "2"), user("c", "3")], ai("B", "2"))
    assert got == [user("a", "1"), ai("B", "2"), user("c", "3")]


def test_messages_without_ids_get_uuid4_ids() -> None:
    got = add_messages([user("Hello")], [ai("Hi there!")])
    assert len(got) == 2
    assert all(uuid.UUID(m["id"]) for m in got)
    assert got[1]["id"] != got[0]["id"]


def test_an_id_given_twice_in_one_update_keeps_the_last() -> None:
    got = add_messages([], [ai("Hi there!", "1"), ai("Hi there again!", "1")])
    assert got == [ai("Hi there again!", "1")]


def test_a_removal_then_the_same_id_again_keeps_the_last_message() -> None:
    got = add_messages(
        [ai("Hello!", "1")], [RemoveMessage("1"), ai("Hi there!", "1"), ai("Hi there again!", "1")]
    )
    assert got == [ai("Hi there again!", "1")]


def test_remove_message_by_position_or_keyword() -> None:
    left = [user("Hello", "1"), ai("Hi there!", "2")]
    assert add_messages(left, RemoveMessage("2")) == [user("Hello", "1")]
    assert add_messages(left, RemoveMessage(id="1")) == [ai("Hi there!", "2")]
    assert add_messages(left, [RemoveMessage("2"), RemoveMessage("2")]) == [user("Hello", "1")]
    assert add_messages(left, [RemoveMessage("1"), RemoveMessage("2")]) == []


def test_a_removal_as_a_dict_is_a_remove_message() -> None:
    assert add_messages([user("Hello", "1"), ai("x", "2")], {"role": "remove", "id": "2"}) == [
        user("Hello", "1")
    ]


def test_removing_an_unknown_id_is_an_error_naming_it() -> None:
    with pytest.raises(
        ag.InvalidUpdateError, match=r"RemoveMessage\('2'\) removes a message the conversation does"
    ):
        add_messages([user("Hello", "1")], RemoveMessage("2"))


def test_mixed_replace_remove_and_append() -> None:
    left = [user("Hello", "1"), ai("Hi there!", "2")]
    got = add_messages(left, [user("Updated hello", "1"), RemoveMessage("2"), system("New message", "3")])
    assert got == [user("Updated hello", "1"), system("New message", "3")]


def test_empty_sides() -> None:
    assert add_messages([], []) == []
    assert add_messages([], [user("Hello", "1")]) == [user("Hello", "1")]
    assert add_messages([user("Hello", "1")], []) == [user("Hello", "1")]


def test_single_messages_on_both_sides() -> None:
    assert add_messages(user("Hello", "1"), ai("Hi there!", "2")) == [
        user("Hello", "1"),
        ai("Hi there!", "2"),
    ]


def test_remove_all_deletes_every_message_before_it() -> None:
    left = [user("Hello"), ai("Hi there!")]
    assert add_messages(left, [RemoveMessage(REMOVE_ALL_MESSAGES)]) == []
    got = add_messages(left, [RemoveMessage(REMOVE_ALL_MESSAGES), user("Updated hello")])
    assert contents(got) == ["Updated hello"] and uuid.UUID(got[0]["id"])
    got = add_messages(left, [user("dropped"), RemoveMessage(REMOVE_ALL_MESSAGES), user("kept", "k")])
    assert got == [user("kept", "k")]


def test_after_remove_all_the_rest_of_the_update_still_applies() -> None:
    got = add_messages(
        [user("a", "1")], [RemoveMessage(REMOVE_ALL_MESSAGES), user("b", "2"), RemoveMessage("2")]
    )
    assert got == []
    with pytest.raises(ag.InvalidUpdateError, match="does not hold"):
        add_messages([user("a", "1")], [RemoveMessage(REMOVE_ALL_MESSAGES), RemoveMessage("1")])


def test_message_likes_are_converted() -> None:
    got = add_messages([], ["hi", ("ai", "hello"), ["system", "be brief"], {"role": "human", "content": "x"}])
    assert [(m["role"], m["content"]) for m in got] == [
        ("user", "hi"),
        ("assistant", "hello"),
        ("system", "be brief"),
        ("user", "x"),
    ]


def test_the_given_messages_are_not_changed() -> None:
    left = [{"role": "user", "content": "a"}]
    right = [{"role": "ai", "content": "b"}]
    add_messages(left, right)
    assert left == [{"role": "user", "content": "a"}] and right == [{"role": "ai", "content": "b"}]


def test_a_state_message_without_an_id_gets_the_same_id_every_time() -> None:
    left = [{"role": "user", "content": "a"}]
    first, second = add_messages(left, []), add_messages(left, [])
    assert first[0]["id"] == second[0]["id"]


@pytest.mark.parametrize(
    ("given", "says"),
    [
        (3, r"3 \(a int\) is not a message"),
        (object(), "is not a message"),
        ({"role": "robot", "content": "x"}, r"has role 'robot'"),
        ({"role": "tool", "content": "x"}, "has no tool_call_id"),
        ({"role": "user", "content": 5}, "has content of type int"),
        ({"role": "assistant", "content": "", "tool_calls": [{"args": {}}]}, "has no name"),
        ({"role": "assistant", "content": "", "tool_calls": [{"name": "f", "args": 1}]}, "args of type int"),
        (("user", "a", "b"), "is not a message"),
        ({"role": "user", "content": "x", "id": 3}, "has an id of type int; an id is a string"),
        ({"role": ["user"], "content": "x"}, r"has role \['user'\]; a message's role is one of"),
        ({"role": {"user": 1}, "content": "x"}, r"has role \{'user': 1\}"),
        ({"type": ["human"], "content": "x"}, r"has role \['human'\]"),
        ({"role": None, "type": ["human"], "content": "x"}, "has role None"),
    ],
)
def test_what_is_not_a_message_is_refused_saying_what_was_given(given: object, says: str) -> None:
    with pytest.raises(ag.InvalidUpdateError, match=says):
        add_messages([], [given])
    with pytest.raises(ag.InvalidUpdateError, match=says):
        add_messages([given], [])


@pytest.mark.parametrize("role", [["user"], {"a": 1}, {1, 2}])
def test_reading_the_role_of_a_message_with_an_unhashable_role_names_the_message(role: object) -> None:
    with pytest.raises(ag.InvalidUpdateError, match=r"the message .* has role"):
        role_of({"role": role, "content": "x"})
    with pytest.raises(ag.InvalidUpdateError, match=r"the message .* has role"):
        role_of({"type": role, "content": "x"})


def test_remove_message_needs_an_id() -> None:
    with pytest.raises(ag.ConfigError, match="RemoveMessage takes the id"):
        RemoveMessage("")


def test_a_conversation_holding_a_removal_is_refused() -> None:
    with pytest.raises(ag.InvalidUpdateError, match="is an update, not a message"):
        add_messages([RemoveMessage("1")], [])
