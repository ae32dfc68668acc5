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
from actorgraph.web._guard import SAFE_HEADERS, Guard
from actorgraph.web._ids import segment
from actorgraph.web._ledger import Ledger
from actorgraph.web._values import (
    ago,
    choices_of,
    cut,
    error_text,
    label,
    pretty,
    pretty_cut,
    shown,
    size_text,
    summary,
)

__all__ = ["HERE", "SHOWN", "TIMELINE", "Site", "site_of"]

HERE = Path(__file__).resolve().parent
SHOWN = 50  # questions of a thread, or choices of a question, a page shows
TIMELINE = 500  # task outcomes a thread page lists (the newest)


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
        pretty_cut=pretty_cut,
        cut=cut,
        size_text=size_text,
        summary=summary,
        ago=ago,
        error_text=error_text,
        seg=segment,  # every id in a URL: one percent-encoded path segment
        shown_limit=SHOWN,
        timeline_limit=TIMELINE,
    )
    return environment


@dataclass(slots=True)
class Site:
    """One app's graph, store, runs and secrets."""

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

    @property
    def answers(self) -> Checkpointer:
        """The store answers are claimed in (the graph's own; the listed one without it)."""
        return self.compiled.checkpointer or self.store

    def page(self, request: Request, name: str, code: int = 200, **values: Any) -> HTMLResponse:
        """A template rendered as a page (links start at the app's mount point)."""
        base = str(request.scope.get("root_path", "")).rstrip("/")
        text = self.templates.get_template(name).render(
            base=base,
            csrf=self.guard.csrf_for(request),
            graph=self.compiled.name,
            secured=self.guard.token,
            **values,
        )
        return HTMLResponse(text, status_code=code, headers=SAFE_HEADERS)

    def problem(self, request: Request, code: int, title: str, message: str, **more: Any) -> HTMLResponse:
        """A readable page for a request the inbox does not serve (what was wrong, where to go)."""
        return self.page(request, "problem.html", code, title=title, message=message, **more)


def site_of(request: Request) -> Site:
    """The site the request's app serves."""
    site: Site = request.app.state.site
    return site
