"""Broken graph files and the located error each gives (the graph-file and the CLI `validate` tests)."""

GOOD_TAIL = "edges:\n  - {source: __start__, target: v}\n  - {source: v, target: __end__}\n"
V = "vertices:\n  - id: v\n    fn: config_vertices:approve\n"

BROKEN = {
    "yaml syntax": ("vertices: [\n  - id: v\n", r"flow\.yaml:2:3: not valid YAML"),
    "unknown top-level field": (
        V + GOOD_TAIL + "vertexes: []\n",
        r"flow\.yaml:7:1: unknown field 'vertexes'",
    ),
    "unknown vertex field": (
        V + "    retries: 3\n" + GOOD_TAIL,
        r"flow\.yaml:4:5: unknown field 'retries'",
    ),
    "missing fn": ("vertices:\n  - id: v\n" + GOOD_TAIL, r"flow\.yaml:2:5: missing required field 'fn'"),
    "module not found": (
        "vertices:\n  - id: v\n    fn: no_such_module:run\n" + GOOD_TAIL,
        r"flow\.yaml:3:9: cannot import module 'no_such_module'",
    ),
    "attribute not found": (
        "vertices:\n  - id: v\n    fn: config_vertices:nope\n" + GOOD_TAIL,
        r"flow\.yaml:3:9: module 'config_vertices' has no 'nope'",
    ),
    "unknown key in a condition": (
        "state: {score: int}\n" + V + "edges:\n  - {source: __start__, target: v}\n"
        "  - {source: v, condition: 'flow.scor > 1'}\n",
        r"flow\.yaml:7:29: unknown key 'scor' in flow",
    ),
    "a call in a condition": (
        V + 'edges:\n  - {source: __start__, target: v}\n  - source: v\n    condition: "len(flow.x)"\n',
        r"flow\.yaml:7:17: .*call",
    ),
    "an edge with target and condition": (
        V + "edges:\n  - {source: __start__, target: v, condition: flow.x}\n",
        r"flow\.yaml:5:5: .*exactly one of target, condition or send",
    ),
    "an edge to an unknown vertex": (
        V + "edges:\n  - {source: __start__, target: w}\n",
        r"flow\.yaml:5:5: edge names unknown vertex 'w' \(vertices: v; ends: __start__, __end__\)",
    ),
    "max_attempts below 1": (
        V + "    retry: {max_attempts: 0}\n" + GOOD_TAIL,
        (
            r"flow\.yaml:4:27: vertices\.0\.retry\.max_attempts: input should be greater than or equal to 1 "
            r"\(got 0\)$"
        ),
    ),
    "an unknown global": (
        "vertices:\n  - id: v\n    fn: config_vertices:check\n    inputs: {rules: global.rules}\n"
        + GOOD_TAIL,
        r"flow\.yaml:2:5: .*reads global\.rules, which the graph does not define",
    ),
    "a key twice": (
        V + "    fn: config_vertices:review\n" + GOOD_TAIL,
        r"flow\.yaml:4:5: key 'fn' appears twice",
    ),
    "a negative timeout": (V + "    timeout: -1\n" + GOOD_TAIL, r"flow\.yaml:4:14: .*greater than 0"),
    "not a mapping": ("- a\n- b\n", r"flow\.yaml:1:1: a graph file is a mapping"),
}
