"""The functional API: workflows written as functions, `@entrypoint` and `@task`.

```python
from actorgraph.func import entrypoint, task
from actorgraph.checkpoint import MemoryCheckpointer

@task
def fetch(url: str) -> str:
    return f"<page {url}>"

@entrypoint(checkpointer=MemoryCheckpointer())
def summarize(urls: list[str]) -> str:
    pages = [fetch(u) for u in urls]          # in parallel, each call recorded
    return " ".join(p.result() for p in pages)

with summarize:
    assert summarize.invoke(["a", "b"], thread_id="t1").state == "<page a> <page b>"
```

An entrypoint's run is a run of a one-vertex graph; its task calls nest in
that vertex's task, checkpointed in the entrypoint's thread as they finish. On
resume (after an answer, a failure or a SIGKILL) the function runs again from
the top and finished calls return their recorded results; a call that does not
match its record (another task, other arguments) is a `ResumeError`.
"""

from actorgraph.func._entrypoint import Entrypoint, entrypoint
from actorgraph.func._task import TaskFunction, TaskFuture, task

__all__ = ["Entrypoint", "TaskFunction", "TaskFuture", "entrypoint", "task"]
