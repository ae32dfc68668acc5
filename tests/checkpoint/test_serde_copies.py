"""MsgpackSerializer builds a big value's bytes with two buffers of its size, not four.

Issue 29 (state size): from 10 MiB to 100 MiB the time per byte of a checkpoint
grew 1.5x. Buffers above glibc's largest mmap threshold (32 MiB) are fresh
pages on every allocation, so every copy of the value is paid again in page
faults; `dumps` made four (the str encoded apart, the packer's buffer, its
bytes, the magic prefix added). These tests count the page faults of one
`dumps`: one per page of each fresh buffer, so the count says how many buffers
of the value's size were filled.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest

from actorgraph.checkpoint.serde import MsgpackSerializer

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="counts fresh mmaps' page faults")

SIZE = 48 << 20  # above glibc's mmap threshold at its largest (32 MiB)


def _faults(make: Callable[[], Any]) -> tuple[int, Any]:
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    made = make()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before, made


def _pages_of_one_buffer() -> int:
    """The page faults of filling one fresh buffer of SIZE bytes (skips where pages are huge)."""
    faults, _ = _faults(lambda: b"\x01" * SIZE)
    if faults < SIZE // 4096 // 2:
        pytest.skip(f"filling {SIZE} fresh bytes took {faults} page faults: pages are not 4 KiB here")
    return faults


@pytest.mark.parametrize(
    "make",
    [lambda: "x" * SIZE, lambda: b"x" * SIZE, lambda: {"blob": "x" * SIZE, "n": 1}],
    ids=["str", "bytes", "dict of a str"],
)
def test_dumps_fills_two_buffers_of_the_values_size(make: Callable[[], Any]) -> None:
    one = _pages_of_one_buffer()
    value = make()
    serializer = MsgpackSerializer()
    faults, data = _faults(lambda: serializer.dumps(value))
    assert len(data) > SIZE
    assert faults < 2.5 * one, f"dumps filled {faults / one:.1f} buffers of the value's size"
    assert serializer.loads(data) == value


def test_a_lone_surrogate_is_still_saved_and_the_bytes_of_other_strings_are_msgpacks_own() -> None:
    import msgpack

    serializer = MsgpackSerializer()
    odd = {"text": "a\udc80b", "list": ["\ud800", "ok"]}
    assert serializer.loads(serializer.dumps(odd)) == odd
    plain = {"text": "h\u00e9llo \U0001f600", "n": [1, 2.5, None]}
    assert serializer.dumps(plain).endswith(msgpack.packb(plain, use_bin_type=True))
