"""Every error the library raises derives from `ActorGraphError`, and still from the builtin it replaced."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import actorgraph as ag
from actorgraph.checkpoint import EncryptedSerializer, MemoryCheckpointer, MsgpackSerializer
from actorgraph.merge import by_key

PACKAGE = Path(ag.__file__).resolve().parent
BUILTINS = {"ValueError", "TypeError", "RuntimeError", "KeyError", "IndexError", "ImportError", "Exception"}
# raised only inside the msgpack decoder, which turns every one of them into a SerializationError
DECODER_INTERNALS = {
    ("checkpoint/_msgpack_ext.py", "TypeError"),
    ("checkpoint/_msgpack_ext.py", "ValueError"),
    ("checkpoint/_msgpack_classes.py", "TypeError"),
    ("checkpoint/_clocktime.py", "TypeError"),
    # raised inside an expression's evaluation, which turns each into a RoutingError naming it
    ("_api/files/expr.py", "TypeError"),
    ("_api/files/expr.py", "ValueError"),
    # pydantic's validators must raise ValueError; load() turns it into a located ConfigFileError
    ("_api/files/model.py", "ValueError"),
    # pydantic's validators again: a request's metadata holding NUL is a 422 naming the field
    ("server/_models.py", "ValueError"),
    # raised while a cron's row is read, which cron_row turns into a CheckpointError naming the cron
    ("server/_cron_rows.py", "ValueError"),
}


def test_no_module_raises_a_bare_builtin() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            call = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            name = call.id if isinstance(call, ast.Name) else ""
            if name in BUILTINS and (relative, name) not in DECODER_INTERNALS:
                found.append(f"{relative}:{node.lineno} raises {name}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("make", "builtin"),
    [
        (lambda: ag.RetryPolicy(max_attempts=0), ValueError),
        (lambda: ag.RetryPolicy(initial_interval=-1), ValueError),
        (lambda: by_key({"n": 3}), TypeError),
        (lambda: EncryptedSerializer(MsgpackSerializer(), b"short"), ValueError),
        (lambda: MsgpackSerializer(allowed=[3]), TypeError),
        (lambda: MemoryCheckpointer().history("t", limit=-1), ValueError),
    ],
)
def test_bad_arguments_raise_config_errors_that_are_also_the_builtin(make, builtin) -> None:
    with pytest.raises(ag.ConfigError) as info:
        make()
    assert isinstance(info.value, builtin) and isinstance(info.value, ag.ActorGraphError)
