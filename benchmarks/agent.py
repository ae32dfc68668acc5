"""A ReAct agent loop: the prebuilt agents of both libraries with a scripted model, 20 tool rounds.

Each run is one `invoke` of a fresh conversation: the model asks for one tool
call per round (`add`), or three parallel calls in the "3 calls" variant, for
`ROUNDS` rounds, then answers. Both models follow the same plan, decided from
the tool messages they are given (so one model object serves every run):
actorgraph's is a plain function over message dicts, LangGraph's a
langchain-core `BaseChatModel` whose `_generate` returns the planned
`AIMessage` and whose `bind_tools` returns itself (no network). Runs go
without a checkpointer, and with an in-memory one (`MemoryCheckpointer`
against `InMemorySaver`) on a new thread per run.

The two libraries run alternately, one run each per pair, so a burst of load
on a shared machine hits both sides of a pair; the figure is the median time
per tool round and the ratio the median of the per-pair ratios.
"""

from __future__ import annotations

import itertools
import statistics
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.prebuilt import create_react_agent
from benchmarks.harness import Row

__all__ = ["ROUNDS", "VARIANTS", "rows"]

ROUNDS = 20
VARIANTS = (  # (calls per round, checkpointed)
    (1, False),
    (1, True),
    (3, False),
    (3, True),
)
_threads = itertools.count()


def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


def _plan(tool_messages: int, width: int) -> tuple[str, list[dict[str, Any]]]:
    """The model's next reply: `width` calls of `add` while rounds are left, else the answer."""
    done = tool_messages // width
    if done >= ROUNDS:
        return f"The sum is {done}.", []
    calls = [{"id": f"call-{done}-{j}", "name": "add", "args": {"a": done, "b": j}} for j in range(width)]
    return "", calls


def _checked(messages: int, width: int) -> int:
    """The conversation's length, after checking that every round ran."""
    if messages != 2 + ROUNDS * (width + 1):
        msg = f"the agent stopped early: {messages} messages"
        raise RuntimeError(msg)
    return messages


# -- actorgraph -----------------------------------------------------------------------------------


def _our_model(width: int) -> Callable[[Sequence[Any]], dict[str, Any]]:
    def model(messages: Sequence[Any]) -> dict[str, Any]:
        text, calls = _plan(sum(1 for m in messages if m.get("role") == "tool"), width)
        reply: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            reply["tool_calls"] = calls
        return reply

    return model


def ours(width: int, checkpointed: bool) -> tuple[Callable[[], object], Callable[[], None]]:
    """A run of actorgraph's agent, and what closes it."""
    checkpointer = MemoryCheckpointer() if checkpointed else None
    agent = create_react_agent(_our_model(width), [add], checkpointer=checkpointer)
    limit = 3 * ROUNDS + 10

    def run() -> object:
        thread = {"thread_id": f"t{next(_threads)}"} if checkpointed else {}
        result = agent.invoke({"messages": ["add them up"]}, recursion_limit=limit, **thread)
        return _checked(len(result.state["messages"]), width)

    return run, agent.close


# -- LangGraph ------------------------------------------------------------------------------------


def _their_model(width: int) -> Any:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class PlannedChatModel(BaseChatModel):
        """Replies by the plan, from the tool messages it is given."""

        @property
        def _llm_type(self) -> str:
            return "planned"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # noqa: ARG002 - langchain's signature
            return self

        def _generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> Any:  # noqa: ARG002
            text, calls = _plan(sum(1 for m in messages if m.type == "tool"), width)
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text, tool_calls=calls))])

    return PlannedChatModel()


def theirs(width: int, checkpointed: bool) -> Callable[[], object]:
    """A run of LangGraph's prebuilt agent."""
    from langgraph.checkpoint.memory import InMemorySaver

    with warnings.catch_warnings():  # langgraph 1.x deprecates it in favour of langchain's create_agent
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import create_react_agent as their_agent

        saver = InMemorySaver() if checkpointed else None
        agent = their_agent(_their_model(width), [add], checkpointer=saver)

    def run() -> object:
        config: dict[str, Any] = {"recursion_limit": 3 * ROUNDS + 10}
        if checkpointed:
            config["configurable"] = {"thread_id": f"t{next(_threads)}"}
        result = agent.invoke({"messages": [("user", "add them up")]}, config)
        return _checked(len(result["messages"]), width)

    return run


# -- measuring ------------------------------------------------------------------------------------


def _timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def measure(width: int, checkpointed: bool, repeat: int, have_langgraph: bool = True) -> Row:
    """One variant: per-round times of both libraries, run alternately, and the paired ratio."""
    name = f"{ROUNDS} rounds x {width} tool call{'s' * (width > 1)}" + (
        ", in-memory checkpointer" if checkpointed else ", no checkpointer"
    )
    run_ours, close = ours(width, checkpointed)
    run_theirs = theirs(width, checkpointed) if have_langgraph else None
    mine: list[float] = []
    other: list[float] = []
    run_ours()  # warm up
    if run_theirs is not None:
        run_theirs()
    for _ in range(repeat):
        mine.append(_timed(run_ours))
        if run_theirs is not None:
            other.append(_timed(run_theirs))
    close()
    per_round = statistics.median(mine) / ROUNDS * 1e3
    if not other:
        return Row(name, "round", f"{per_round:.2f} ms/round", "n/a", "n/a")
    ratio = statistics.median(t / m for t, m in zip(other, mine, strict=True))
    theirs_round = statistics.median(other) / ROUNDS * 1e3
    return Row(name, "round", f"{per_round:.2f} ms/round", f"{theirs_round:.2f} ms/round", f"{ratio:.2f}x")


def rows(repeat: int, have_langgraph: bool = True) -> list[Row]:
    """Every variant's row (time per tool round; the ratio is LangGraph's time over ours)."""
    return [measure(width, saved, repeat, have_langgraph) for width, saved in VARIANTS]
