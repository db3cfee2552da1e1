"""A SAML 2.0 identity provider for tests and for trying Portico's SAML sign-in by hand:
pysaml2's ``Server`` (the IdP side of the same library Portico's service provider uses)
behind a small HTTP server on loopback, signing with a key of its own.

    python tests/support/samlidp.py --port 8088 --users users.json --key-dir var/saml-idp

``users.json`` maps each email to its password and the attributes the IdP asserts::

    {"alice@example.com": {"password": "alice-password",
                           "attributes": {"email": ["alice@example.com"],
                                          "displayName": ["Alice Liddell"],
                                          "groups": ["operators"]}}}

The key and its self-signed certificate are generated into ``--key-dir`` when it has none
(``idp.key``, ``idp.crt``). What it serves:

* ``GET /metadata``: the IdP's metadata (its entity id is this URL);
* ``GET /certificate``: the signing certificate, PEM (what Portico's configuration stores);
* ``GET /sso?SAMLRequest=...&RelayState=...`` (HTTP-Redirect binding): a sign-in form;
* ``POST /sso``: checks the email and password, then answers the service provider with a
  signed Response (Response and Assertion signed, RSA-SHA256) in an auto-submitting form
  posted to the request's AssertionConsumerServiceURL (HTTP-POST binding).

The service provider is looked up by the request's Issuer, which for Portico is the URL of
its metadata: the IdP fetches it there once (loopback only: this is a test IdP).

Self-contained (run as a script by :class:`SamlIdp`): the standard library, pysaml2 and
cryptography. ``Crafter`` builds documents the process would not (expired, for another
audience, re-signed after a change) with the same key, for the refusal tests.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import html
import http.client
import json
import re
import sys
import threading
import urllib.request
import uuid
import warnings
import zlib
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from defusedxml import ElementTree

with warnings.catch_warnings():
    # pysaml2 7.5 names a cipher mode cryptography has moved (it does not use it here)
    warnings.simplefilter("ignore")
    from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
    from saml2.attribute_converter import AttributeConverter
    from saml2.config import IdPConfig
    from saml2.metadata import create_metadata_string
    from saml2.saml import NAME_FORMAT_BASIC, NAMEID_FORMAT_EMAILADDRESS, NameID
    from saml2.server import Server
    from saml2.xmldsig import DIGEST_SHA256, SIG_RSA_SHA256

if __package__:
    from .process import ServerProcess
else:  # run as a script
    ServerProcess = object  # type: ignore[assignment,misc]

XMLSEC = "/usr/bin/xmlsec1"
PASSWORD_CONTEXT = "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport"
_NS = {
    "samlp": "urn:oasis:names:tc:SAML:2.0:protocol",
    "saml": "urn:oasis:names:tc:SAML:2.0:assertion",
    "md": "urn:oasis:names:tc:SAML:2.0:metadata",
}

# ------------------------------------------------------------------------------ keys


def generate_signing_key(directory: Path, common_name: str = "portico-test-idp") -> Path:
    """An RSA key and its self-signed certificate in ``directory`` (``idp.key``,
    ``idp.crt``), made once; returns the directory."""
    directory.mkdir(parents=True, exist_ok=True)
    key_path, cert_path = directory / "idp.key", directory / "idp.crt"
    if key_path.exists() and cert_path.exists():
        return directory
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=365))
        .sign(key, hashes.SHA256())
    )
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    key_path.chmod(0o600)
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    return directory


# ------------------------------------------------------------------------------ the IdP


def idp_config(
    base_url: str, key_dir: Path, sp_metadata: Sequence[str] = (), lifetime_minutes: int = 5
) -> IdPConfig:
    config = IdPConfig()
    config.load(
        {
            "entityid": f"{base_url}/metadata",
            "service": {
                "idp": {
                    "endpoints": {
                        "single_sign_on_service": [(f"{base_url}/sso", BINDING_HTTP_REDIRECT)]
                    },
                    "policy": {
                        "default": {
                            "lifetime": {"minutes": lifetime_minutes},
                            "attribute_restrictions": None,
                            "name_form": NAME_FORMAT_BASIC,
                        }
                    },
                    "name_id_format": [NAMEID_FORMAT_EMAILADDRESS],
                    "want_authn_requests_signed": False,
                }
            },
            "key_file": str(key_dir / "idp.key"),
            "cert_file": str(key_dir / "idp.crt"),
            "xmlsec_binary": XMLSEC,
            "metadata": {"inline": list(sp_metadata)},
        }
    )
    # attributes go out under the names the users file gives them, not pysaml2's URNs
    plain = AttributeConverter(NAME_FORMAT_BASIC)
    plain.from_dict({"identifier": NAME_FORMAT_BASIC, "fro": {}, "to": {}})
    config.attribute_converters = [plain]
    return config


def decode_redirect_request(saml_request: str) -> str:
    """The AuthnRequest XML of an HTTP-Redirect binding parameter (base64 of raw DEFLATE)."""
    return zlib.decompress(base64.b64decode(saml_request), -15).decode("utf-8")


def response_form(acs_url: str, saml_response: str, relay_state: str | None) -> str:
    relay = (
        f'<input type="hidden" name="RelayState" value="{html.escape(relay_state)}">'
        if relay_state is not None
        else ""
    )
    return (
        "<!doctype html><html><head><title>Signing you in</title></head>"
        '<body onload="document.forms[0].submit()">'
        f'<form method="post" action="{html.escape(acs_url)}">'
        f'<input type="hidden" name="SAMLResponse" value="{html.escape(saml_response)}">'
        f'{relay}<noscript><button type="submit">Continue</button></noscript>'
        "</form></body></html>"
    )


def login_form(saml_request: str, relay_state: str | None, error: str = "") -> str:
    relay = (
        f'<input type="hidden" name="RelayState" value="{html.escape(relay_state)}">'
        if relay_state is not None
        else ""
    )
    alert = f'<p role="alert">{html.escape(error)}</p>' if error else ""
    return (
        "<!doctype html><html><head><title>Test identity provider</title></head><body>"
        "<h1>Test identity provider</h1>"
        f'{alert}<form method="post" action="sso" aria-label="Identity provider sign-in">'
        '<label>Email <input name="email" type="email" autocomplete="username"></label>'
        '<label>Password <input name="password" type="password"></label>'
        f'<input type="hidden" name="SAMLRequest" value="{html.escape(saml_request)}">'
        f'{relay}<button type="submit">Continue</button></form></body></html>'
    )


class IdentityProvider:
    """pysaml2's IdP for any service provider whose metadata its Issuer URL serves."""

    def __init__(
        self, base_url: str, key_dir: Path, users: Mapping[str, Mapping[str, Any]]
    ) -> None:
        self.base_url = base_url
        self.key_dir = key_dir
        self.users = users
        self._servers: dict[str, Server] = {}
        self._lock = threading.Lock()
        self.metadata = create_metadata_string(
            None, config=idp_config(base_url, key_dir), valid=None
        ).decode("utf-8")

    def server_for(self, sp_entity_id: str) -> Server:
        with self._lock:
            server = self._servers.get(sp_entity_id)
            if server is None:
                metadata = fetch_loopback(sp_entity_id)
                server = Server(config=idp_config(self.base_url, self.key_dir, [metadata]))
                self._servers[sp_entity_id] = server
            return server

    def answer(self, saml_request: str, email: str, password: str) -> tuple[str, str]:
        """(ACS URL, base64 Response) for the request, once the user's password matches."""
        request_xml = decode_redirect_request(saml_request)
        root = ElementTree.fromstring(request_xml)
        issuer = root.findtext("saml:Issuer", namespaces=_NS) or ""
        server = self.server_for(issuer)
        request = server.parse_authn_request(saml_request, BINDING_HTTP_REDIRECT).message
        user = self.users.get(email.strip().lower())
        if user is None or user.get("password") != password:
            raise PermissionError("wrong email or password")
        acs = (
            request.assertion_consumer_service_url
            or server.metadata.assertion_consumer_service(issuer, BINDING_HTTP_POST)[0]["location"]
        )
        response = server.create_authn_response(
            dict(user.get("attributes", {})),
            request.id,
            acs,
            issuer,
            name_id=NameID(format=NAMEID_FORMAT_EMAILADDRESS, text=email),
            authn={"class_ref": PASSWORD_CONTEXT},
            sign_response=True,
            sign_assertion=True,
            sign_alg=SIG_RSA_SHA256,
            digest_alg=DIGEST_SHA256,
        )
        return acs, base64.b64encode(str(response).encode("utf-8")).decode("ascii")


def fetch_loopback(url: str) -> str:
    host = urlsplit(url).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise PermissionError(
            f"this test IdP fetches service-provider metadata on loopback only: {url}"
        )
    with urllib.request.urlopen(url, timeout=10) as answer:  # noqa: S310 — loopback only
        return str(answer.read().decode("utf-8"))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def handler_for(idp: IdentityProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            sys.stderr.write(f"saml-idp: {self.command} {urlsplit(self.path).path}\n")

        def _send(self, status: int, body: str, content_type: str = "text/html") -> None:
            data = body.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", f"{content_type}; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            if parts.path == "/metadata":
                self._send(200, idp.metadata, "application/samlmetadata+xml")
            elif parts.path == "/certificate":
                self._send(200, (idp.key_dir / "idp.crt").read_text(), "application/x-pem-file")
            elif parts.path == "/sso" and "SAMLRequest" in query:
                relay = query.get("RelayState", [None])[0]
                self._send(200, login_form(query["SAMLRequest"][0], relay))
            else:
                self._send(404, "not found", "text/plain")

        def do_POST(self) -> None:
            if urlsplit(self.path).path != "/sso":
                self._send(404, "not found", "text/plain")
                return
            length = int(self.headers.get("Content-Length") or 0)
            form = parse_qs(self.rfile.read(length).decode("utf-8"))
            field = {name: values[0] for name, values in form.items()}
            saml_request = field.get("SAMLRequest", "")
            relay = field.get("RelayState")
            try:
                acs, response = idp.answer(
                    saml_request, field.get("email", ""), field.get("password", "")
                )
            except PermissionError as refused:
                self._send(401, login_form(saml_request, relay, str(refused)))
                return
            except Exception as failed:
                self._send(400, f"cannot answer this request: {failed}", "text/plain")
                return
            self._send(200, response_form(acs, response, relay))

    return Handler


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8088)
    parser.add_argument(
        "--users", type=Path, required=True, help="JSON: email → password, attributes"
    )
    parser.add_argument(
        "--key-dir", type=Path, required=True, help="idp.key/idp.crt (made if absent)"
    )
    args = parser.parse_args(argv)
    users = {email.lower(): user for email, user in json.loads(args.users.read_text()).items()}
    base_url = f"http://{args.host}:{args.port}"
    generate_signing_key(args.key_dir)
    idp = IdentityProvider(base_url, args.key_dir, users)
    try:
        server = _Server((args.host, args.port), handler_for(idp))
    except OSError as error:
        print(f"saml-idp: cannot listen on {args.host}:{args.port}: {error}", flush=True)
        raise SystemExit(1) from None
    print(f"saml-idp: serving {base_url} (metadata {base_url}/metadata)", flush=True)
    print(f"saml-idp: signing certificate {args.key_dir / 'idp.crt'}", flush=True)
    server.serve_forever()


# ------------------------------------------------------------------------------ the fixture


class SamlIdp(ServerProcess):  # type: ignore[misc,valid-type]
    """The IdP above as a child process on a free loopback port."""

    name: ClassVar[str] = "saml identity provider"
    bind_failure: ClassVar[str | None] = "Address already in use"

    def __init__(self, log_path: Path, key_dir: Path, users: Mapping[str, Any]) -> None:
        super().__init__(log_path)
        self.key_dir = generate_signing_key(key_dir)
        self.users_path = key_dir / "users.json"
        self.users_path.write_text(json.dumps(users))

    def command(self) -> Sequence[str]:
        return [
            sys.executable,
            str(Path(__file__).resolve()),
            "--port",
            str(self.port),
            "--users",
            str(self.users_path),
            "--key-dir",
            str(self.key_dir),
        ]

    def is_ready(self) -> bool:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=1)
        try:
            connection.request("GET", "/metadata")
            return connection.getresponse().status == 200
        except OSError:
            return False
        finally:
            connection.close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def entity_id(self) -> str:
        return f"{self.base_url}/metadata"

    @property
    def sso_url(self) -> str:
        return f"{self.base_url}/sso"

    @property
    def certificate(self) -> str:
        return (self.key_dir / "idp.crt").read_text()


def hidden_field(page: str, name: str) -> str | None:
    """The value of a hidden form field of an HTML page (the IdP's and Portico's)."""
    found = re.search(rf'name="{name}" value="([^"]*)"', page)
    return html.unescape(found.group(1)) if found else None


# ------------------------------------------------------------------------------ crafting


class Crafter:
    """Signed Responses the IdP process would not send, made in-process with its key: the
    refusal tests change one thing of a genuine document at a time."""

    def __init__(self, base_url: str, key_dir: Path, sp_metadata: str) -> None:
        self.server = Server(config=idp_config(base_url, key_dir, [sp_metadata]))
        self.sp_entity_id = ElementTree.fromstring(sp_metadata).get("entityID", "")

    def response(
        self,
        *,
        in_response_to: str,
        acs_url: str,
        email: str,
        attributes: Mapping[str, list[str]],
        audience: str | None = None,
        issuer: str | None = None,
        shift: datetime.timedelta = datetime.timedelta(0),
    ) -> str:
        """A Response (XML) signed on both levels; ``shift`` moves every time in it (an
        expired one: a shift of minus an hour), ``audience`` and ``issuer`` replace
        the genuine ones before signing."""
        response = self.server.create_authn_response(
            dict(attributes),
            in_response_to,
            acs_url,
            self.sp_entity_id,
            name_id=NameID(format=NAMEID_FORMAT_EMAILADDRESS, text=email),
            authn={"class_ref": PASSWORD_CONTEXT},
            sign_response=True,
            sign_assertion=True,
            sign_alg=SIG_RSA_SHA256,
            digest_alg=DIGEST_SHA256,
        )
        xml = str(response)
        if shift:
            xml = _shift_times(xml, shift)
        if audience is not None:
            xml = re.sub(
                r"(<(\w+:)?Audience>)[^<]*(</(\w+:)?Audience>)",
                lambda m: f"{m.group(1)}{html.escape(audience)}{m.group(3)}",
                xml,
            )
        if issuer is not None:
            xml = re.sub(
                r"(<(\w+:)?Issuer[^>]*>)[^<]*(</(\w+:)?Issuer>)",
                lambda m: f"{m.group(1)}{html.escape(issuer)}{m.group(3)}",
                xml,
            )
        return self.resign(xml)

    def resign(self, xml: str) -> str:
        """Sign the document's Assertion, then its Response, again (after a change)."""
        root = ElementTree.fromstring(xml)
        assertion = root.find("saml:Assertion", _NS)
        if assertion is not None:
            xml = self.server.sec.sign_statement(
                xml, "urn:oasis:names:tc:SAML:2.0:assertion:Assertion", node_id=assertion.get("ID")
            )
        return str(
            self.server.sec.sign_statement(
                xml, "urn:oasis:names:tc:SAML:2.0:protocol:Response", node_id=root.get("ID")
            )
        )


_TIME = re.compile(
    r'(IssueInstant|NotBefore|NotOnOrAfter|AuthnInstant|SessionNotOnOrAfter)="([^"]+)"'
)


def _shift_times(xml: str, shift: datetime.timedelta) -> str:
    def moved(match: re.Match[str]) -> str:
        value = datetime.datetime.strptime(match.group(2)[:19], "%Y-%m-%dT%H:%M:%S")
        return f'{match.group(1)}="{(value + shift).strftime("%Y-%m-%dT%H:%M:%SZ")}"'

    return _TIME.sub(moved, xml)


def new_id() -> str:
    return f"id-{uuid.uuid4().hex}"


if __name__ == "__main__":
    main()
