"""The facade: `Graph`, `CompiledGraph` and what they are made of, and graph files.

Run options checked once (`request`), run preparation from a thread's
checkpoint (`resume`, `answers`), reading and changing threads (`history`),
streams, the compiled graph itself, text helpers shared by the front ends
(`text`), and graph files (`files`: YAML, safe expressions, the allowlist).

May import: the actors, persistence, building, engine and records layers.
"""
