"""Vertex functions that the graph files of tests/config/test_config.py name by import path."""

from __future__ import annotations

from typing import Any

import actorgraph as ag


def increment(state: dict[str, Any]) -> dict[str, Any]:
    return {"n": state["n"] + 1}


def parse(given: dict[str, Any]) -> dict[str, Any]:
    return {"parsed": given["raw"].strip().lower()}


def check(given: dict[str, Any]) -> dict[str, Any]:
    return {"verdict": "pass" if len(given["user"]) >= given["rules"]["min_length"] else "reject"}


def approve(state: dict[str, Any]) -> dict[str, Any]:
    return {"outcome": "approved"}


def review(state: dict[str, Any]) -> dict[str, Any]:
    return {"outcome": "manual review"}


def word(state: dict[str, Any]) -> dict[str, Any]:
    return {"lengths": [len(state["word"])]}


def ask(state: dict[str, Any]) -> dict[str, Any]:
    return {"answer": ag.interrupt("approve?")}


def not_a_function() -> None:
    return None


NOT_CALLABLE = 42


def passthrough(state: dict[str, Any]) -> None:
    return None


def step(state: dict[str, Any]) -> dict[str, Any]:
    """One step of a branch: adds a mark to `log`."""
    return {"log": ["step"]}


def gather(state: dict[str, Any]) -> dict[str, Any]:
    """An aggregator: notes how many marks it saw, once per run of it."""
    return {"gathered": [len(state["log"])]}
