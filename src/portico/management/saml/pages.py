"""The pages a browser sees at the end of a SAML sign-in that does not go back to the
console: a refusal (the problem's title and detail), and the code an admin API client
exchanges. Plain HTML, no script; never cached."""

from __future__ import annotations

import html

from fastapi.responses import HTMLResponse

_HEADERS = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def _page(title: str, body: str, status: int) -> HTMLResponse:
    return HTMLResponse(
        "<!doctype html><html><head><meta charset=utf-8>"
        f"<title>{html.escape(title)}</title></head><body><main>"
        f"<h1>{html.escape(title)}</h1>{body}</main></body></html>",
        status_code=status,
        headers=_HEADERS,
    )


def refusal(title: str, detail: str, status: int, problem_type: str) -> HTMLResponse:
    return _page(
        title,
        f'<p role="alert">{html.escape(detail)}</p>'
        f'<p>What this means and what to do: <a href="{html.escape(problem_type)}">'
        f"{html.escape(problem_type)}</a>.</p>"
        '<p><a href="/console/">Back to the sign-in page</a></p>',
        status,
    )


def admin_api_code(code: str, email: str) -> HTMLResponse:
    exchange = (
        "curl -s -X POST &lt;this server&gt;/api/admin/v1/auth/token "
        "-H 'content-type: application/json' "
        f'-d \'{{"saml_code": "{html.escape(code)}"}}\''
    )
    return _page(
        "Signed in to the admin API",
        f"<p>{html.escape(email)} is signed in. Exchange this one-time code for the admin "
        "API's tokens within a minute (it works once):</p>"
        f'<p><output aria-label="Sign-in code">{html.escape(code)}</output></p>'
        f"<pre>{exchange}</pre>",
        200,
    )
