"""Building a graph: the builder users call, vertex options, and the validation that freezes it.

`GraphBuilder` collects vertices, edges, joins and routers; `build_spec` checks
the whole graph and returns the frozen `GraphSpec` the engine runs.

May import: the engine and records layers (`actorgraph.draw` sits beside it).
"""
