"""The pages problem ``type`` URIs name: ``GET /problems`` and ``GET /problems/{kind}``.

Every problem document's ``type`` is ``/problems/<kind>`` (``core/errors.py``), a reference
relative to the server, so the control-plane app serves these at its root for both REST
surfaces. The catalogue is read from the error classes themselves (every loaded subclass of
``PorticoError``), so a new kind has its page the moment its class exists: its title and
status from the class, when it happens and what to do from its ``description``.

Public documentation: no authentication. JSON (``{"data": ...}``) by default; HTML for a
browser that asks for it, since people follow these links too.
"""

from __future__ import annotations

import html
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, Field

from portico.core.envelope import Envelope
from portico.core.errors import NotFound, PorticoError
from portico.core.query import strict_query


class ProblemTypeNotFound(NotFound):
    default_detail = "no such problem type"


class ProblemType(BaseModel):
    type: str = Field(description="The URI problem documents carry: /problems/<kind>.")
    kind: str
    title: str
    status: int = Field(description="The HTTP status problems of this type are answered with.")
    description: str = Field(description="When it happens, and what to do.")


def error_classes() -> list[type[PorticoError]]:
    """``PorticoError`` and every loaded subclass, parents before their children."""
    out: list[type[PorticoError]] = []
    pending: list[type[PorticoError]] = [PorticoError]
    while pending:
        cls = pending.pop(0)
        if cls not in out:
            out.append(cls)
            pending.extend(cls.__subclasses__())
    return out


def catalogue() -> dict[str, ProblemType]:
    """One entry per kind, from the class that introduces it (the first, breadth-first, to
    set ``kind`` itself): its subclasses refine the message, not the kind."""
    kinds: dict[str, ProblemType] = {}
    for cls in error_classes():
        if cls.kind in kinds:
            continue
        kinds[cls.kind] = ProblemType(
            type=f"/problems/{cls.kind}",
            kind=cls.kind,
            title=cls.title,
            status=cls.status,
            description=cls.description,
        )
    return dict(sorted(kinds.items()))


router = APIRouter(prefix="/problems", tags=["problems"], dependencies=[Depends(strict_query)])


def _wants_html(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "text/html" in accept and "application/json" not in accept


#: a browser that asks for HTML gets a page instead of JSON
HTML: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/html": {"schema": {"type": "string"}}}}
}


@router.get("", response_model=Envelope[list[ProblemType]], responses=HTML)
async def list_problem_types(request: Request) -> Any:
    """Every kind of problem the API answers with."""
    types = list(catalogue().values())
    if _wants_html(request):
        return _page("Problem types", types)
    return Envelope(data=types)


@router.get("/{kind}", response_model=Envelope[ProblemType], responses=HTML)
async def get_problem_type(kind: str, request: Request) -> Any:
    """One kind of problem: its title, status, when it happens and what to do."""
    found = catalogue().get(kind)
    if found is None:
        raise ProblemTypeNotFound()
    if _wants_html(request):
        return _page(found.title, [found])
    return Envelope(data=found)


def _page(heading: str, types: list[ProblemType]) -> HTMLResponse:
    sections = "".join(
        f'<section id="{html.escape(t.kind)}"><h2><a href="{html.escape(t.type)}">'
        f"{html.escape(t.title)}</a> ({t.status})</h2><p><code>{html.escape(t.type)}</code></p>"
        f"<p>{html.escape(t.description)}</p></section>"
        for t in types
    )
    return HTMLResponse(
        f"<!doctype html><html><head><meta charset=utf-8><title>{html.escape(heading)}</title>"
        f"</head><body><h1>{html.escape(heading)}</h1>{sections}</body></html>"
    )
