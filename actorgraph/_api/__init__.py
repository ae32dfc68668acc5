"""The facade: `Graph`, `CompiledGraph` and what they are made of, and graph files.

Run options checked once into a `RunRequest` (`request`), reading and
changing threads (`history`), streams, the compiled graph itself, text helpers
shared by the front ends (`text`), and graph files (`files`: YAML, safe
expressions, the allowlist). Preparing a run is the engine's (`_engine.preparing`),
done on the run's coordinator.

May import: the actors, persistence, building, engine and records layers.
"""
