"""The WAF engine's rule set and its HTTP face: ``POST /inspect``, ``GET /health``.

``/inspect`` takes ``{method, uri, headers, client_ip, body, body_encoding?}`` (``uri`` with
its query; ``headers`` a list of ``[name, value]`` pairs or an object; ``body`` text, or
base64 with ``"body_encoding": "base64"``) and answers ``{"action": "pass"}`` or
``{"action": "block", "rule_id": "942100", "status": 403, "matched": [...]}``.

The rules are ModSecurity's engine settings (:data:`ENGINE_DIRECTIVES`: what
``modsecurity.conf-recommended`` sets for request inspection; Debian ships that file only
with the Apache module, so its essentials are here, and ``--config`` replaces them), then the
Core Rule Set as Debian's ``modsecurity-crs`` lays it out (``owasp-crs.load``'s order).

The server is the standard library's threading HTTP/1.1 server: a gateway keeps a few
keep-alive connections, each served by its thread, and ctypes releases the GIL while
libmodsecurity evaluates, so connections are inspected in parallel.
"""

from __future__ import annotations

import base64
import binascii
import glob
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from portico.waf.modsecurity import RuleEngine

logger = logging.getLogger("portico.waf")

#: the request-side settings of ModSecurity's modsecurity.conf-recommended, engine On
ENGINE_DIRECTIVES = r"""
SecRuleEngine On
SecRequestBodyAccess On
SecRule REQUEST_HEADERS:Content-Type "(?:application(?:/soap\+|/)|text/)xml" \
  "id:'200000',phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=XML"
SecRule REQUEST_HEADERS:Content-Type "application/json" \
  "id:'200001',phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=JSON"
SecRequestBodyLimit 13107200
SecRequestBodyNoFilesLimit 131072
SecRequestBodyLimitAction ProcessPartial
SecRule REQBODY_ERROR "!@eq 0" \
  "id:'200002', phase:2,t:none,log,deny,status:400,msg:'Failed to parse request body.'"
SecPcreMatchLimit 1000
SecPcreMatchLimitRecursion 1000
SecResponseBodyAccess Off
SecAuditEngine Off
SecArgumentSeparator &
SecCookieFormat 0
"""

CRS_SETUP = "/etc/modsecurity/crs/crs-setup.conf"
CRS_RULES = "/usr/share/modsecurity-crs/rules/*.conf"
CRS_BEFORE = "/etc/modsecurity/crs/REQUEST-900-EXCLUSION-RULES-BEFORE-CRS.conf"
CRS_AFTER = "/etc/modsecurity/crs/RESPONSE-999-EXCLUSION-RULES-AFTER-CRS.conf"
#: what one /inspect may weigh: a 64 KiB body, base64-encoded, and the headers
MAX_INSPECT_BYTES = 1024 * 1024


@dataclass(frozen=True)
class RuleFiles:
    """Where the rules are (Debian's paths by default)."""

    config: str | None = None  # replaces ENGINE_DIRECTIVES when given
    crs_setup: str = CRS_SETUP
    rules: str = CRS_RULES  # a glob

    def files(self) -> list[str]:
        rules = sorted(glob.glob(self.rules))
        if not rules:
            raise FileNotFoundError(
                f"no rule files match {self.rules}; install the modsecurity-crs package"
            )
        optional = [p for p in (CRS_BEFORE,) if Path(p).is_file()]
        after = [p for p in (CRS_AFTER,) if Path(p).is_file()]
        return [self.crs_setup, *optional, *rules, *after]

    def directives(self) -> str:
        if self.config is None:
            return ENGINE_DIRECTIVES
        return Path(self.config).read_text()


def load_engine(files: RuleFiles) -> RuleEngine:
    return RuleEngine(files.files(), files.directives())


def _headers(raw: Any) -> list[tuple[str, str]]:
    if isinstance(raw, dict):
        items: Iterable[Any] = raw.items()
    elif isinstance(raw, list):
        items = raw
    else:
        raise ValueError("headers must be an object or a list of [name, value] pairs")
    pairs = []
    for item in items:
        if not (len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], str)):
            raise ValueError("each header is a [name, value] pair of strings")
        pairs.append((item[0], item[1]))
    return pairs


def _body(request: dict[str, Any]) -> bytes:
    body = request.get("body") or ""
    if not isinstance(body, str):
        raise ValueError("body must be a string")
    if request.get("body_encoding") == "base64":
        try:
            return base64.b64decode(body, validate=True)
        except binascii.Error:
            raise ValueError("body is not valid base64") from None
    return body.encode()


def inspect(engine: RuleEngine, request: dict[str, Any]) -> dict[str, Any]:
    """The verdict on one ``/inspect`` document (``ValueError`` if it is malformed)."""
    method, uri, client_ip = (request.get(k) for k in ("method", "uri", "client_ip"))
    if not (isinstance(method, str) and isinstance(uri, str) and uri.startswith("/")):
        raise ValueError("method and uri (a path, with its query) are required")
    if "\x00" in method or "\x00" in uri:  # C strings would end there: the rest unseen
        raise ValueError("method and uri must not hold NUL")
    verdict = engine.inspect(
        method=method,
        uri=uri,
        headers=_headers(request.get("headers", [])),
        client_ip=client_ip if isinstance(client_ip, str) else "",
        body=_body(request),
    )
    if not verdict.blocked:
        return {"action": "pass"}
    # the engine's own record of what it refused (the gateway's client is not told why)
    logger.info(
        "blocked %s %s from %s: rule %s (matched %s)",
        method,
        uri[:512],
        client_ip,
        verdict.rule_id,
        ",".join(verdict.matched),
    )
    return {
        "action": "block",
        "rule_id": verdict.rule_id,
        "status": verdict.status,
        "matched": verdict.matched,
    }


def make_server(host: str, port: int, engine: RuleEngine) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: the gateway reuses its connections
        server_version = "portico-waf-engine"

        def do_GET(self) -> None:
            if self.path == "/health":
                self._answer(200, {"status": "ok"})
            else:
                self._answer(404, {"error": "not found"})

        def do_POST(self) -> None:
            if self.path != "/inspect":
                self._answer(404, {"error": "not found"})
                return
            length = int(self.headers.get("content-length") or 0)
            if not 0 < length <= MAX_INSPECT_BYTES:
                self.close_connection = True
                self._answer(413 if length else 411, {"error": "bad length"})
                return
            try:
                document = json.loads(self.rfile.read(length))
                if not isinstance(document, dict):
                    raise ValueError("the request must be a JSON object")
                answer = inspect(engine, document)
            except ValueError as error:
                self._answer(400, {"error": str(error)})
                return
            self._answer(200, answer)

        def _answer(self, status: int, document: dict[str, Any]) -> None:
            # one write for the whole answer: written in pieces (the base class's way), the
            # body would wait out Nagle and the client's delayed ACK on a kept-alive socket
            body = json.dumps(document).encode()
            lines = [
                f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
                "content-type: application/json",
                f"content-length: {len(body)}",
            ]
            if self.close_connection:
                lines.append("connection: close")
            self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)

        def log_message(self, format: str, *args: Any) -> None:
            logger.debug(format, *args)

    return _Server((host, port), Handler)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # a gateway opens its connections in a burst; the default backlog (5) would leave some
    # waiting out a SYN retransmission (a second)
    request_queue_size = 128


def serve(host: str, port: int, files: RuleFiles) -> None:
    """Load the rules and serve until interrupted."""
    engine = load_engine(files)
    server = make_server(host, port, engine)
    logger.info("waf engine listening on %s:%d", host, port)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        engine.close()
