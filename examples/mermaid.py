"""Print a graph as a Mermaid diagram (paste it into any Mermaid viewer).

Run it: python examples/mermaid.py
"""

from __future__ import annotations

import approval


def main() -> str:
    with approval.build().compile() as app:
        text = app.draw_mermaid()
    print(text, end="")
    return text


if __name__ == "__main__":
    main()
