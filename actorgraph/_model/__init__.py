"""Records: the frozen values every layer speaks in, and the error tree.

Holds the lineage records (`Node`, `Message`, `Task`), outcomes (`VertexResult`,
`SuperstepState`, `Interrupt`, `ErrorInfo`), what a caller reads back
(`RunResult`, `Snapshot`), retry policies, the frozen graph spec and its schema
and data flow, and every error actorgraph raises.

May import: nothing of actorgraph (the bottom layer; `actorgraph.events` sits beside it).
"""
