"""The pure superstep logic: plan, run one task's attempt, route, merge with lineage, decide.

Functions that take records and return records: preparing an input, planning
and committing a superstep, merging states against their lowest common
ancestor, routing an outbox, interpreting what a vertex returned, retry
decisions, what a recorded outcome means on resume, and the naming of
subgraph runs. No threads, no clock (one is passed in), no I/O; tested
without actors.

May import: `actorgraph._model`, `actorgraph.events`, `actorgraph.merge` (its public face).
"""
