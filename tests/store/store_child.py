"""A child process for the store tests: unpickles a store, reads the parent's value, writes its own.

Usage: python store_child.py <pickled store file>; prints what it read, as JSON.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # the toy embedding the store was pickled with, and its imports

with Path(sys.argv[1]).open("rb") as file:
    store = pickle.load(file)  # noqa: S301 - the test's own file
with store:
    item = store.get(("shared",), "from-parent")
    store.put(("shared",), "from-child", {"text": "dog dog", "pid": os.getpid()})
    found = store.search(("shared",), query="dog", limit=1)
report = {"read": item.value if item else None, "top": found[0].key}
print(json.dumps(report))  # noqa: T201 - the parent reads it
