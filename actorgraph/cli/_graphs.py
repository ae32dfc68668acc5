"""`draw`, `validate` and `schema`: the graph itself, no run needed (a store only for `draw --thread`)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from actorgraph import CompiledGraph
from actorgraph.cli._codes import DONE
from actorgraph.cli._console import print_json, safe, stderr, stdout, styled
from actorgraph.cli._exits import CommandError, describe, guarded, report
from actorgraph.cli._opened import opened
from actorgraph.cli._options import (
    Output,
    StoreChoice,
    allow_modules_option,
    command,
    output_options,
    store_options,
)
from actorgraph.cli._target import alone, find
from actorgraph.cli._thread import checked_thread
from actorgraph.draw import render_with_dot

__all__ = ["draw", "schema", "validate"]

_FORMATS = {
    ".mmd": "mermaid",
    ".mermaid": "mermaid",
    ".dot": "dot",
    ".gv": "dot",
    ".svg": "svg",
    ".png": "png",
}


@contextmanager
def _compiled(target: str, thread: str | None, store: StoreChoice) -> Iterator[CompiledGraph[Any]]:
    """TARGET compiled: on its store to read a thread's statuses, else without one."""
    if thread is not None:
        checked_thread(thread, "--thread")
        with opened(target, store, readonly=True) as app:
            app.get_state(thread)  # an unknown thread is an error, not a picture without colours
            yield app
        return
    with alone(find(target)) as app:
        yield app


@command(
    "draw",
    examples=[
        "actorgraph draw flow.yaml                       # Mermaid text on stdout",
        "actorgraph draw flow.yaml -o flow.png           # also .svg (Graphviz), .mmd, .dot",
        "actorgraph draw myapp.flows:approval --thread notes-1 -o notes-1.svg",
    ],
)
@click.argument("target")
@click.option(
    "-o", "--output", metavar="FILE", help="Write to FILE: .mmd (Mermaid), .dot, .svg or .png (Graphviz)."
)
@click.option("--thread", metavar="ID", help="Colour each vertex by its last status in this thread.")
@store_options
@output_options
@guarded
def draw(*, target: str, output: str | None, thread: str | None, store: StoreChoice, out: Output) -> int:
    """Draw TARGET as a picture: Mermaid text on stdout, or a file (-o).

    With --thread, each vertex is coloured by its last outcome in that thread:
    ok green, error red, interrupt amber, about to run grey.
    """
    fmt = "mermaid" if output is None else _FORMATS.get(Path(output).suffix.lower())
    if fmt is None:
        raise CommandError(f"-o {output}: give a file ending in {', '.join(_FORMATS)}")
    with _compiled(target, thread, store) as app:
        text = app.draw_mermaid(thread) if fmt == "mermaid" else app.draw_dot(thread)
    if output is None:
        if out.json:
            print_json({"format": fmt, "text": text})
        else:
            stdout.file.write(safe(text))  # names in it are data: no control character reaches the terminal
        return DONE
    if fmt in ("svg", "png"):
        render_with_dot(text, output, fmt)
    else:
        Path(output).write_text(text)
    if out.json:
        print_json({"format": fmt, "path": output})
    else:
        stdout.print(f"wrote {output}")
    return DONE


def _check(target: str) -> tuple[CompiledGraph[Any], list[str]]:
    """TARGET found and compiled, and the warnings compiling it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        app = alone(find(target))
    return app, [str(w.message) for w in caught]


@command(
    "validate",
    examples=["actorgraph validate flow.yaml", "actorgraph validate myapp.flows:approval --json"],
)
@click.argument("target")
@allow_modules_option
@output_options
@guarded
def validate(*, target: str, out: Output) -> int:
    """Load and compile TARGET, and report its problems: exit 0 if it can run, else non-zero.

    Warnings (a graph that compiles but looks unintended) are shown and do not fail it.
    """
    try:
        app, cautions = _check(target)
    except Exception as exc:  # noqa: BLE001 - every problem is reported, whatever its kind
        code = report(exc, debug=out.debug)
        if out.json:
            print_json({"target": target, "valid": False, "problems": [describe(exc)], "warnings": []})
        return code
    with app:
        vertices = list(app.spec.vertices)
    if out.json:
        print_json(
            {"target": target, "valid": True, "graph": app.name, "vertices": vertices, "warnings": cautions}
        )
        return DONE
    for caution in cautions:
        stderr.print(styled(("warning:", "yellow"), f" {caution}"))
    shown = ", ".join(vertices)
    told = f" {target}: graph {app.name!r}, {len(vertices)} vertices ({shown})"
    stdout.print(styled(("ok:", "green"), told))
    return DONE


@command("schema", examples=["actorgraph schema > actorgraph.schema.json"])
@output_options
@guarded
def schema(*, out: Output) -> int:  # noqa: ARG001 - --json is accepted: the schema is JSON anyway
    """Print the JSON Schema of the graph file format (YAML), for editors and checks.

    The output is JSON with or without --json.
    """
    from actorgraph._api.files.loading import json_schema  # noqa: PLC0415 - PyYAML and pydantic only when asked

    print_json(json_schema())
    return DONE
