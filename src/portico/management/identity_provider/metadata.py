"""An identity provider's SAML 2.0 metadata, read from the URL an administrator gives
(``metadataUrl``): its entity id, its single sign-on URL (HTTP-Redirect binding) and its
signing certificate fill the configuration, so that nothing is copied by hand.

The URL goes through the SSRF guard (``core/egress.py``; internal addresses only when
``PORTICO_MANAGEMENT_EGRESS_ALLOW`` lists them), redirects are checked one by one, the body
is bounded, and the document is parsed with DTDs and entities refused. Whatever goes wrong
is a 400 naming ``metadataUrl``.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

import httpx
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from defusedxml import ElementTree as SafeElementTree

from portico.core.egress import BodyTooLarge, EgressGuard, EgressRefused, guarded_get, read_bounded
from portico.core.errors import ValidationFailed

#: metadata of one IdP is a few kilobytes; aggregates of a federation are not read
MAX_METADATA_BYTES = 1024 * 1024
TIMEOUT_SECONDS = 10.0
_MD = "urn:oasis:names:tc:SAML:2.0:metadata"
_DS = "http://www.w3.org/2000/09/xmldsig#"
_PROTOCOL = "urn:oasis:names:tc:SAML:2.0:protocol"
REDIRECT_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"


@dataclass(frozen=True)
class IdentityProviderFacts:
    entity_id: str
    sso_url: str
    certificate_pem: str


def _refused(detail: str) -> ValidationFailed:
    return ValidationFailed.at("/metadataUrl", f"metadataUrl: {detail}")


async def read(url: str, guard: EgressGuard) -> IdentityProviderFacts:
    try:
        async with httpx.AsyncClient(timeout=TIMEOUT_SECONDS) as client:
            response = await guarded_get(client, guard, url)
            body = await read_bounded(response, MAX_METADATA_BYTES)
    except EgressRefused as refused:
        raise _refused(f"not fetched: {refused}") from None
    except BodyTooLarge:
        raise _refused(f"larger than {MAX_METADATA_BYTES} bytes: not one IdP's metadata") from None
    except httpx.HTTPError as error:
        raise _refused(f"cannot be read: {type(error).__name__}") from None
    if not 200 <= response.status_code < 300:
        raise _refused(f"cannot be read: it answered {response.status_code}")
    return parse(body)


def parse(document: bytes) -> IdentityProviderFacts:
    try:
        root = SafeElementTree.fromstring(document)
    except Exception:  # defusedxml raises several kinds for hostile or broken input
        raise _refused("not an XML document (SAML 2.0 metadata expected)") from None
    entity = root if root.tag == f"{{{_MD}}}EntityDescriptor" else None
    if entity is None and root.tag == f"{{{_MD}}}EntitiesDescriptor":
        entities = [
            e
            for e in root.iter(f"{{{_MD}}}EntityDescriptor")
            if e.find(f"{{{_MD}}}IDPSSODescriptor") is not None
        ]
        if len(entities) != 1:
            raise _refused("describes several identity providers: give the URL of one")
        entity = entities[0]
    if entity is None:
        raise _refused("not SAML 2.0 metadata (no EntityDescriptor)")
    entity_id = (entity.get("entityID") or "").strip()
    idp = entity.find(f"{{{_MD}}}IDPSSODescriptor")
    if not entity_id or idp is None:
        raise _refused("describes no identity provider (no IDPSSODescriptor)")
    if _PROTOCOL not in (idp.get("protocolSupportEnumeration") or ""):
        raise _refused("the identity provider does not speak SAML 2.0")
    sso = [
        s.get("Location", "").strip()
        for s in idp.findall(f"{{{_MD}}}SingleSignOnService")
        if s.get("Binding") == REDIRECT_BINDING
    ]
    if not sso or not sso[0]:
        raise _refused("the identity provider has no SingleSignOnService for HTTP-Redirect")
    certificates = [
        (key.findtext(f"{{{_DS}}}KeyInfo/{{{_DS}}}X509Data/{{{_DS}}}X509Certificate") or "")
        for key in idp.findall(f"{{{_MD}}}KeyDescriptor")
        if key.get("use") in (None, "signing")
    ]
    certificates = [c for c in certificates if c.strip()]
    if not certificates:
        raise _refused("the identity provider names no signing certificate")
    try:
        der = base64.b64decode("".join(certificates[0].split()), validate=True)
        pem = x509.load_der_x509_certificate(der).public_bytes(serialization.Encoding.PEM)
    except (binascii.Error, ValueError):
        raise _refused("its signing certificate is not an X.509 certificate") from None
    return IdentityProviderFacts(entity_id, sso[0], pem.decode("ascii"))
