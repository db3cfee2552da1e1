"""Portico as a SAML 2.0 service provider, through pysaml2 (signatures by Debian's
``xmlsec1``): the AuthnRequest sent by HTTP-Redirect, the service provider's metadata, and
the verification of a Response received by HTTP-POST.

Nothing here reads the store. The caller looks up the request a Response answers
(``in_response_to``), passes its id to :func:`verify`, and keeps the assertion ids it has
seen (``store.py``): pysaml2 checks the signature with the one certificate configured,
the issuer, the audience, the times (with :data:`LEEWAY_SECONDS`), the subject
confirmation (recipient, InResponseTo), and this module checks again what a sign-in rests
on (exactly one signed assertion, its issuer, its audience, its id) on the parsed objects.

pysaml2 logs whole documents at debug level: its loggers are silenced here, so that no
assertion reaches a log whatever ``PORTICO_LOG_LEVEL`` says.
"""

from __future__ import annotations

import base64
import binascii
import functools
import logging
import shutil
import warnings
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from xml.sax.saxutils import quoteattr

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from defusedxml import ElementTree as SafeElementTree

with warnings.catch_warnings():
    # pysaml2 7.5 names a cipher mode that cryptography moved; it does not use it here
    warnings.simplefilter("ignore")
    from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
    from saml2.client import Saml2Client
    from saml2.config import SPConfig
    from saml2.metadata import create_metadata_string
    from saml2.response import AuthnResponse
    from saml2.saml import NAMEID_FORMAT_EMAILADDRESS

#: seconds of clock difference accepted on NotBefore/NotOnOrAfter (the IdP's clock and ours)
LEEWAY_SECONDS = 60
#: a Response larger than this is not read (a real one is a few kilobytes)
MAX_RESPONSE_BYTES = 256 * 1024
XMLSEC_BINARY = "xmlsec1"
_PROTOCOL = "urn:oasis:names:tc:SAML:2.0:protocol"
_ASSERTION = "urn:oasis:names:tc:SAML:2.0:assertion"

for _name in ("saml2", "xmlschema"):
    # Documents (assertions included) are logged at debug and info level by pysaml2.
    logging.getLogger(_name).setLevel(logging.CRITICAL + 1)
    logging.getLogger(_name).propagate = False


class SamlRefused(Exception):
    """A Response that signs nobody in; the message says why, and holds nothing of the
    document but what the service provider expected."""


class SamlUnavailable(Exception):
    """The service provider cannot check signatures: ``xmlsec1`` is not installed."""


@dataclass(frozen=True)
class IdentityProviderTrust:
    """What Portico trusts of one identity provider: its entity id, where users sign in,
    and the certificate its signatures must verify with."""

    entity_id: str
    sso_url: str
    certificate_pem: str


@dataclass(frozen=True)
class ServiceProvider:
    """Portico's side of one configuration: its entity id (its metadata URL) and its
    assertion consumer service."""

    entity_id: str
    acs_url: str


@dataclass(frozen=True)
class Verified:
    """The facts of a verified assertion that a sign-in uses."""

    issuer: str
    assertion_id: str
    in_response_to: str
    name_id: str | None
    not_on_or_after: datetime
    #: attribute name (and friendly name, when it has one) → values
    attributes: dict[str, list[str]]


def xmlsec_binary() -> str:
    found = shutil.which(XMLSEC_BINARY) or shutil.which(XMLSEC_BINARY, path="/usr/bin")
    if found is None:
        raise SamlUnavailable(
            "SAML sign-in needs the xmlsec1 program (Debian package xmlsec1), which is not "
            "installed on this server"
        )
    return found


def _certificate_body(pem: str) -> str:
    """The base64 DER of a PEM certificate, as metadata's X509Certificate holds it."""
    der = x509.load_pem_x509_certificate(pem.encode("ascii")).public_bytes(
        serialization.Encoding.DER
    )
    return base64.b64encode(der).decode("ascii")


def identity_provider_metadata(idp: IdentityProviderTrust) -> str:
    """The IdP's metadata as Portico knows it, made from the stored configuration: the only
    certificate pysaml2 will verify its signatures with is the stored one."""
    return (
        '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" '
        'xmlns:ds="http://www.w3.org/2000/09/xmldsig#" '
        f"entityID={quoteattr(idp.entity_id)}>"
        '<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">'
        '<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>'
        f"{_certificate_body(idp.certificate_pem)}"
        "</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>"
        f"<md:SingleSignOnService Binding={quoteattr(BINDING_HTTP_REDIRECT)} "
        f"Location={quoteattr(idp.sso_url)}/>"
        "</md:IDPSSODescriptor></md:EntityDescriptor>"
    )


@functools.lru_cache(maxsize=128)
def _config(idp: IdentityProviderTrust, sp: ServiceProvider, xmlsec: str) -> SPConfig:
    """A pysaml2 configuration per (IdP, SP): loading one parses the IdP's metadata, so it
    is kept; clients are made per use (a client remembers whom it signed in)."""
    config = SPConfig()
    config.load(
        {
            "entityid": sp.entity_id,
            "service": {
                "sp": {
                    "endpoints": {"assertion_consumer_service": [(sp.acs_url, BINDING_HTTP_POST)]},
                    "authn_requests_signed": False,
                    # the assertion itself must be signed: a signed Response around an
                    # unsigned assertion is refused (pysaml2 then checks both signatures)
                    "want_assertions_signed": True,
                    "want_response_signed": False,
                    "allow_unsolicited": False,
                    "name_id_format": [NAMEID_FORMAT_EMAILADDRESS],
                    "name_id_format_allow_create": False,
                }
            },
            "metadata": {"inline": [identity_provider_metadata(idp)]},
            "xmlsec_binary": xmlsec,
            "accepted_time_diff": LEEWAY_SECONDS,
            "allow_unknown_attributes": True,
            "delete_tmpfiles": True,
        }
    )
    return config


def _client(idp: IdentityProviderTrust, sp: ServiceProvider) -> Saml2Client:
    return Saml2Client(config=_config(idp, sp, xmlsec_binary()))


def metadata(idp: IdentityProviderTrust, sp: ServiceProvider) -> str:
    """The service provider's metadata XML for this configuration."""
    return str(create_metadata_string(None, config=_config(idp, sp, xmlsec_binary())).decode())


def authn_request(idp: IdentityProviderTrust, sp: ServiceProvider) -> tuple[str, str]:
    """(request id, the URL of the IdP carrying the AuthnRequest by HTTP-Redirect). The
    RelayState is the request's id: the assertion consumer checks that the Response that
    comes back with it answers that very request."""
    client = _client(idp, sp)
    request_id, request = client.create_authn_request(
        idp.sso_url,
        binding=BINDING_HTTP_REDIRECT,
        nameid_format=NAMEID_FORMAT_EMAILADDRESS,
        sign=False,
    )
    info = client.apply_binding(
        BINDING_HTTP_REDIRECT, str(request), idp.sso_url, relay_state=str(request_id), sign=False
    )
    location = dict(info["headers"])["Location"]
    return str(request_id), str(location)


def decode_response(saml_response: str) -> bytes:
    """The XML of an HTTP-POST ``SAMLResponse`` field."""
    if len(saml_response) > MAX_RESPONSE_BYTES * 4 // 3 + 4:
        raise SamlRefused("the SAMLResponse is larger than any sign-in response")
    try:
        return base64.b64decode(saml_response, validate=True)
    except (binascii.Error, ValueError):
        raise SamlRefused("the SAMLResponse is not base64") from None


def in_response_to(document: bytes, *, issuer: str) -> str:
    """The InResponseTo of a Response, read (trusting nothing in it yet) to find the request
    it claims to answer; a document whose issuers are not ``issuer`` is refused at once, with
    that reason. External entities and DTDs are refused by the parser."""
    try:
        root = SafeElementTree.fromstring(document)
    except Exception:
        raise SamlRefused("the SAMLResponse is not a well-formed XML document") from None
    if root.tag != f"{{{_PROTOCOL}}}Response":
        raise SamlRefused("the SAMLResponse is not a SAML 2.0 Response")
    named = {(element.text or "").strip() for element in root.iter(f"{{{_ASSERTION}}}Issuer")}
    if named - {issuer}:
        raise SamlRefused(f"the Response is not issued by {issuer}")
    value = root.get("InResponseTo")
    if not value:
        raise SamlRefused("the Response answers no request (no InResponseTo): unsolicited")
    return str(value)


def verify(
    idp: IdentityProviderTrust,
    sp: ServiceProvider,
    *,
    saml_response: str,
    request_id: str,
) -> Verified:
    """Verify a Response (the ``SAMLResponse`` field) answering ``request_id``; blocking
    (xmlsec1 runs as a child process): call it from a worker thread."""
    client = _client(idp, sp)
    try:
        response = client.parse_authn_request_response(
            saml_response, BINDING_HTTP_POST, outstanding={request_id: "portico"}
        )
    except SamlRefused:
        raise
    except Exception as error:
        raise SamlRefused(_reason(error)) from None
    if response is None:
        raise SamlRefused("the Response cannot be read as a SAML 2.0 authentication response")
    return _facts(response, idp, sp, request_id)


def _facts(
    response: AuthnResponse, idp: IdentityProviderTrust, sp: ServiceProvider, request_id: str
) -> Verified:
    assertions = list(response.response.assertion or [])
    if response.response.encrypted_assertion:
        raise SamlRefused("encrypted assertions are not accepted")
    if len(assertions) != 1 or response.assertion is not assertions[0]:
        raise SamlRefused("the Response must hold exactly one assertion")
    assertion = assertions[0]
    if response.response.in_response_to != request_id:
        raise SamlRefused("the Response answers another request")
    issuers = {_text(response.response.issuer), _text(assertion.issuer)} - {None}
    if issuers != {idp.entity_id}:
        raise SamlRefused(f"the assertion is not issued by {idp.entity_id}")
    if assertion.signature is None:
        raise SamlRefused("the assertion is not signed")
    for signature in (assertion.signature, response.response.signature):
        if signature is not None:
            _strong(signature)
    audiences = {
        _text(audience)
        for restriction in (assertion.conditions.audience_restriction or [])
        for audience in restriction.audience
    }
    if sp.entity_id not in audiences:
        raise SamlRefused(f"the assertion is not meant for {sp.entity_id} (audience)")
    not_on_or_after = _not_on_or_after(assertion)
    attributes: dict[str, list[str]] = {}
    for statement in assertion.attribute_statement or []:
        for attribute in statement.attribute:
            values = [_text(v) or "" for v in attribute.attribute_value]
            for name in {attribute.name, attribute.friendly_name} - {None, ""}:
                attributes.setdefault(str(name), []).extend(values)
    subject = assertion.subject
    name_id = _text(subject.name_id) if subject is not None else None
    return Verified(
        issuer=idp.entity_id,
        assertion_id=str(assertion.id),
        in_response_to=request_id,
        name_id=name_id,
        not_on_or_after=not_on_or_after,
        attributes=attributes,
    )


#: signature and digest algorithms accepted (SHA-1 and MD5 are not: collisions)
STRONG_ALGORITHMS = frozenset(
    {
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384",
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
        "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256",
        "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384",
        "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512",
        "http://www.w3.org/2001/04/xmlenc#sha256",
        "http://www.w3.org/2001/04/xmldsig-more#sha384",
        "http://www.w3.org/2001/04/xmlenc#sha512",
    }
)


def _strong(signature: Any) -> None:
    info = signature.signed_info
    used = [info.signature_method.algorithm] + [
        reference.digest_method.algorithm for reference in info.reference
    ]
    weak = [algorithm for algorithm in used if algorithm not in STRONG_ALGORITHMS]
    if weak:
        raise SamlRefused(f"the signature uses a weak algorithm ({weak[0]}); SHA-256 or better")


def _text(element: Any) -> str | None:
    text = getattr(element, "text", None)
    return None if text is None else str(text).strip()


def _not_on_or_after(assertion: Any) -> datetime:
    """The latest moment the assertion may be used: its Conditions' NotOnOrAfter, or its
    bearer confirmation's, whichever is later (how long its id must be remembered)."""
    moments = [assertion.conditions.not_on_or_after] + [
        confirmation.subject_confirmation_data.not_on_or_after
        for confirmation in (assertion.subject.subject_confirmation or [])
        if confirmation.subject_confirmation_data is not None
    ]
    parsed = [_instant(m) for m in moments if m]
    if not parsed:
        raise SamlRefused("the assertion has no NotOnOrAfter: it would be valid for ever")
    return max(parsed)


def _instant(value: str) -> datetime:
    text = value.strip().replace("Z", "+00:00")
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _reason(error: Exception) -> str:
    """What went wrong, in the service provider's words: pysaml2's messages may quote the
    document, so only the kind of error is translated, never its text."""
    kind = type(error).__name__
    reasons = {
        "SignatureError": "the signature does not verify with the configured certificate",
        "MissingKey": "the signature does not verify with the configured certificate",
        "SigverError": "the signature does not verify with the configured certificate",
        "ResponseLifetimeExceed": "the assertion has expired (NotOnOrAfter)",
        "ToEarly": "the assertion is not valid yet (NotBefore)",
        "TimeoutError": "the assertion has expired (NotOnOrAfter)",
        "UnsolicitedResponse": "the Response answers no request this service issued",
        "StatusError": "the identity provider did not authenticate the user",
        "VerificationError": "the Response is not valid",
        "UnknownPrincipal": "the identity provider did not authenticate the user",
        "AuthnFailed": "the identity provider did not authenticate the user",
        "RequestVersionTooLow": "the Response is not SAML 2.0",
        "RequestVersionTooHigh": "the Response is not SAML 2.0",
        "IncorrectlySigned": "the signature does not verify with the configured certificate",
    }
    if kind in reasons:
        return reasons[kind]
    if "StatusError" in {c.__name__ for c in type(error).__mro__}:
        return "the identity provider did not authenticate the user"
    message = str(error)
    if "Not for me" in message or "audience" in message.lower():
        return "the assertion is not meant for this service provider (audience)"
    if "Combination of session id" in message:
        return "the Response answers no request this service issued"
    if "not signed" in message.lower() or "signature" in message.lower():
        return "the signature does not verify with the configured certificate"
    return "the Response is not a valid signed SAML 2.0 authentication response"


__all__ = [
    "LEEWAY_SECONDS",
    "IdentityProviderTrust",
    "SamlRefused",
    "SamlUnavailable",
    "ServiceProvider",
    "Verified",
    "authn_request",
    "decode_response",
    "in_response_to",
    "metadata",
    "verify",
]
