"""Prebuilt agent parts: `ToolNode`, `tools_condition`, `create_react_agent`, and tool parameter markers.

A tool is a Python function (its name, its docstring as the description, its
type hints as the argument schema, checked before each call) or a
langchain-core tool. `ToolNode` runs every tool call of the last assistant
message as a task of its own, so calls run in parallel, retry alone, and a
crash re-runs only the calls that had not finished.
"""

from actorgraph.prebuilt._agent import ModelVertex, create_react_agent
from actorgraph.prebuilt._tool_node import ToolNode, tools_condition
from actorgraph.prebuilt._tools import (
    InjectedState,
    InjectedStore,
    InjectedToolCallId,
    Tool,
    ToolCallError,
    as_tool,
)

__all__ = [
    "InjectedState",
    "InjectedStore",
    "InjectedToolCallId",
    "ModelVertex",
    "Tool",
    "ToolCallError",
    "ToolNode",
    "as_tool",
    "create_react_agent",
    "tools_condition",
]
