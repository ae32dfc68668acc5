"""Conversations in a state: the `add_messages` reducer, `RemoveMessage` and `MessagesState`.

A message is a plain dict in the common chat format: `role` (user, assistant,
system or tool), `content`, `id`, `tool_calls` as `[{"id", "name", "args"}]`,
`tool_call_id` and `name`. Wherever a message is expected, a string is a user
message, a `(role, content)` pair is a message, LangGraph's roles `human` and
`ai` mean user and assistant, and langchain-core message objects are accepted
and kept as they are (when that package is installed: `pip install
"actorgraph[langchain]"`; it is never imported otherwise).

```python
from actorgraph import END, START, Graph
from actorgraph.messages import MessagesState, content_of, last_message

def chat(state):
    return {"messages": ("assistant", f"you said {content_of(last_message(state))}")}

g = Graph(state=MessagesState, returns="update")
g.add_vertex("chat", chat)
g.add_edge(START, "chat")
g.add_edge("chat", END)
state = g.compile().invoke({"messages": ["hi"]}).state  # "hi" becomes a user message with an id
assert [m["role"] for m in state["messages"]] == ["user", "assistant"]
```

`add_messages` appends, replaces a message whose id is present, deletes on
`RemoveMessage(id)` (all messages before it on
`RemoveMessage(REMOVE_ALL_MESSAGES)`) and gives ids to messages without one.
Parallel branches that each add, replace or delete messages are merged by
their changes, so each lands exactly once. Messages, `RemoveMessage` and
langchain-core messages pass the safe checkpoint serializer without pickle.
The helpers (`role_of`, `content_of`, `id_of`, `tool_calls_of`,
`last_message`) read dicts and langchain-core objects alike.
"""

from actorgraph.messages._coerce import (
    coerce_message,
    content_of,
    id_of,
    last_message,
    message,
    role_of,
    tool_calls_of,
    tool_message,
)
from actorgraph.messages._reducer import AddMessages, add_messages
from actorgraph.messages._remove import REMOVE_ALL_MESSAGES, RemoveMessage
from actorgraph.messages._state import AnyMessage, MessagesState

__all__ = [
    "REMOVE_ALL_MESSAGES",
    "AddMessages",
    "AnyMessage",
    "MessagesState",
    "RemoveMessage",
    "add_messages",
    "coerce_message",
    "content_of",
    "id_of",
    "last_message",
    "message",
    "role_of",
    "tool_calls_of",
    "tool_message",
]
