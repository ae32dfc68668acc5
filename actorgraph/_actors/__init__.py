"""The actors: pykka coordinators and vertex pools that move messages and call the engine.

Coordinators drive runs superstep by superstep and write them to the
checkpointer (`Recorder`); bounded vertex pools run tasks with retry and report
`VertexResult`s; timers schedule backoff; subgraph runs are launched on their
parent's coordinator; cancellation and structured logs live here too. The
actors only move messages: every decision is the engine's.

May import: the persistence (`actorgraph.checkpoint`), building, engine and records layers.
"""
