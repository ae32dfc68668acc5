"""What every page needs: the graph, its store, the ledger, the guard, and the templates."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse

from actorgraph import CompiledGraph
from actorgraph.checkpoint import Checkpointer
from actorgraph.web._guard import Guard
from actorgraph.web._ledger import Ledger
from actorgraph.web._values import ago, choices_of, error_text, label, pretty, shown, summary

__all__ = ["HERE", "Site", "site_of"]

HERE = Path(__file__).resolve().parent


def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # every value from a state or an interrupt is escaped
        undefined=jinja2.StrictUndefined,
    )
    environment.globals.update(
        shown=shown,
        label=label,
        choices_of=choices_of,
        pretty=pretty,
        summary=summary,
        ago=ago,
        error_text=error_text,
    )
    return environment


@dataclass(slots=True)
class Site:
    """One app's graph, store, answers and secrets."""

    compiled: CompiledGraph[Any]
    store: Checkpointer
    ledger: Ledger
    guard: Guard
    templates: jinja2.Environment
    css: bytes

    @classmethod
    def of(cls, compiled: CompiledGraph[Any], store: Checkpointer, token: str | None) -> Site:
        """The site of a compiled graph on its store."""
        css = (HERE / "static" / "style.css").read_bytes()
        return cls(compiled, store, Ledger(compiled), Guard(token), _environment(), css)

    def page(self, request: Request, name: str, code: int = 200, **values: Any) -> HTMLResponse:
        """A template rendered as a page (links start at the app's mount point)."""
        base = str(request.scope.get("root_path", "")).rstrip("/")
        text = self.templates.get_template(name).render(
            base=base, csrf=self.guard.csrf, graph=self.compiled.name, secured=self.guard.token, **values
        )
        return HTMLResponse(text, status_code=code)


def site_of(request: Request) -> Site:
    """The site the request's app serves."""
    site: Site = request.app.state.site
    return site
