from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal, Self
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from pydantic import AfterValidator, BaseModel, Field, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from portico.core.errors import ValidationFailed
from portico.core.schema import ReadSchema, WriteSchema
from portico.core.validation import invalid

MAX_MAPPINGS = 50
# A PEM X.509 certificate is a few kilobytes; the bound keeps a hostile body small.
MAX_CERTIFICATE_CHARS = 16_384
# Plain http is only for a test IdP running next to the management service.
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
# User fields that hold one value: mapping two attributes to one of them is ambiguous.
_SINGLE_VALUED = ("email", "displayName")
_PEM_BEGIN = "-----BEGIN CERTIFICATE-----"

UserField = Literal["email", "displayName", "groups"]


def _trimmed(value: str) -> str:
    if value != value.strip():
        raise ValueError("must not start or end with whitespace")
    return value


def _no_whitespace(value: str) -> str:
    if any(c.isspace() for c in value):
        raise ValueError("must not contain whitespace")
    return value


def _sso_url(value: str) -> str:
    """An absolute https URL: browsers are sent there with a signed-in user's SAML request."""
    _no_whitespace(value)
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 — raises on a port that is not a number in range
    except ValueError:
        raise ValueError("not a valid URL") from None
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValueError("must be an absolute https URL")
    if parts.scheme == "http" and parts.hostname not in _LOCAL_HOSTS:
        raise ValueError("must use https (http only for localhost or 127.0.0.1)")
    if parts.username is not None or parts.password is not None:
        raise ValueError("must not carry credentials")
    if parts.fragment:
        raise ValueError("must not have a fragment")
    return value


def _pem_certificate(value: str) -> str:
    """Parse the IdP's signing certificate and store it in canonical PEM, so that every
    reader (SAML assertion checks, the fingerprint shown to admins) sees the same bytes.
    An expired certificate is accepted: the read shows its expiry so admins can act."""
    if value.count(_PEM_BEGIN) != 1:
        raise ValueError("not a PEM X.509 certificate")
    try:
        certificate = x509.load_pem_x509_certificate(value.strip().encode("ascii"))
    except (ValueError, UnicodeEncodeError):
        raise ValueError("not a PEM X.509 certificate") from None
    return certificate.public_bytes(serialization.Encoding.PEM).decode("ascii")


Name = Annotated[str, Field(min_length=1, max_length=100), AfterValidator(_trimmed)]
EntityId = Annotated[str, Field(min_length=1, max_length=1024), AfterValidator(_no_whitespace)]
SsoUrl = Annotated[str, Field(min_length=1, max_length=2048), AfterValidator(_sso_url)]
Certificate = Annotated[
    str, Field(min_length=1, max_length=MAX_CERTIFICATE_CHARS), AfterValidator(_pem_certificate)
]
Attribute = Annotated[str, Field(min_length=1, max_length=256), AfterValidator(_trimmed)]
MetadataUrl = Annotated[str, Field(min_length=1, max_length=2048), AfterValidator(_sso_url)]


class IdentityProviderMapping(WriteSchema):
    attribute: Attribute = Field(
        description="SAML attribute name, e.g. "
        "'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress'."
    )
    user_field: UserField = Field(
        description="The user field it fills; 'groups' maps the attribute's values to group "
        "names of the organisation."
    )


Mappings = Annotated[list[IdentityProviderMapping], Field(max_length=MAX_MAPPINGS)]


def _check_mappings(mappings: list[IdentityProviderMapping] | None) -> None:
    """Refuse a single-valued user field mapped twice, and a repeated mapping; the pointer
    names the repeating entry."""
    seen_fields: Counter[str] = Counter()
    seen_pairs: set[tuple[str, str]] = set()
    for index, mapping in enumerate(mappings or []):
        field = mapping.user_field
        seen_fields[field] += 1
        if field in _SINGLE_VALUED and seen_fields[field] > 1:
            invalid(("mappings", index, "userField"), f"'{field}' may be mapped only once", field)
        pair = (mapping.attribute, field)
        if pair in seen_pairs:
            invalid(("mappings", index), f"duplicate mapping of '{mapping.attribute}' to '{field}'")
        seen_pairs.add(pair)


class IdentityProviderCreate(WriteSchema):
    name: Name = Field(description="Unique within the organisation.")
    type: Literal["saml"] = "saml"
    metadata_url: MetadataUrl | None = Field(
        None,
        description="The IdP's SAML 2.0 metadata (https; http only for localhost): read once, "
        "it fills entityId, ssoUrl and certificate (those given in the body win).",
    )
    entity_id: EntityId | None = Field(
        None, description="The identity provider's entity id, usually a URI."
    )
    sso_url: SsoUrl | None = Field(
        None,
        description="Single sign-on URL, HTTP-Redirect binding (https; http only for localhost).",
    )
    certificate: Certificate | None = Field(
        None, description="PEM X.509 signing certificate of the IdP."
    )
    mappings: Mappings = Field(
        default_factory=list,
        description="Attribute → user field; the configuration is inactive while empty.",
    )
    jit_provisioning: bool = Field(
        False,
        description="Just-in-time provisioning: a signed-in email with no membership in the "
        "organisation is given one (no roles; the groups its assertion maps to) instead of "
        "being refused as not provisioned.",
    )

    @model_validator(mode="after")
    def _valid_mappings(self) -> Self:
        if self.metadata_url is None:
            missing = [
                self.__class__.model_fields[name].alias or name
                for name in ("entity_id", "sso_url", "certificate")
                if getattr(self, name) is None
            ]
            if missing:
                # every missing field at once, as a missing required field would be
                raise ValidationError.from_exception_data(
                    "portico",
                    [
                        InitErrorDetails(
                            type=PydanticCustomError("portico", "required (or metadataUrl)"),
                            loc=(name,),
                            input=None,
                        )
                        for name in missing
                    ],
                )
        _check_mappings(self.mappings)
        return self


class IdentityProviderUpdate(WriteSchema):
    """Every field optional; ``mappings`` replaces the whole list (``[]`` deactivates)."""

    name: Name | None = None
    type: Literal["saml"] | None = None
    metadata_url: MetadataUrl | None = Field(
        None, description="Read the IdP's metadata again from this URL (see create)."
    )
    entity_id: EntityId | None = None
    sso_url: SsoUrl | None = None
    certificate: Certificate | None = None
    mappings: Mappings | None = None
    jit_provisioning: bool | None = None

    @model_validator(mode="after")
    def _valid_update(self) -> Self:
        # An explicit null would otherwise read as "keep": a client sending
        # ``"mappings": null`` to clear them must not get a silent no-op.
        for name in sorted(self.model_fields_set):
            if getattr(self, name) is None:
                field = self.__class__.model_fields[name]
                invalid((field.alias or name,), "must not be null; omit the field to keep it")
        _check_mappings(self.mappings)
        return self


def checked_metadata(entity_id: str, sso_url: str, certificate: str) -> tuple[str, str, str]:
    """What an IdP's metadata said, held to the rules of the fields it fills; a value that
    breaks one is reported at ``metadataUrl``."""
    checks = (
        ("its entityID", entity_id, _no_whitespace, 1024),
        ("its SingleSignOnService", sso_url, _sso_url, 2048),
        ("its signing certificate", certificate, _pem_certificate, MAX_CERTIFICATE_CHARS),
    )
    values: list[str] = []
    for what, value, check, longest in checks:
        try:
            if len(value) > longest:
                raise ValueError(f"longer than {longest} characters")
            values.append(check(value))
        except ValueError as error:
            raise ValidationFailed.at("/metadataUrl", f"metadataUrl: {what}: {error}") from None
    return values[0], values[1], values[2]


@dataclass(frozen=True)
class CertificateFacts:
    fingerprint: str | None
    subject: str | None
    expires_at: datetime | None


def certificate_facts(pem: str) -> CertificateFacts:
    """What an admin needs to recognise a certificate. Stored certificates were parsed on
    write; should a later library refuse one, the read still works and shows nothing."""
    try:
        certificate = x509.load_pem_x509_certificate(pem.encode("ascii"))
    except (ValueError, UnicodeEncodeError):
        return CertificateFacts(None, None, None)
    digest = certificate.fingerprint(hashes.SHA256())
    return CertificateFacts(
        fingerprint=":".join(f"{b:02X}" for b in digest),
        subject=certificate.subject.rfc4514_string(),
        expires_at=certificate.not_valid_after_utc,
    )


class IdentityProviderMappingRead(ReadSchema):
    attribute: str
    user_field: str


class IdentityProviderSummary(ReadSchema):
    """A configuration as listed (and as audited): the certificate by its facts, not its PEM."""

    id: uuid.UUID
    org_id: uuid.UUID
    name: str
    type: str
    metadata_url: str | None
    entity_id: str
    sso_url: str
    certificate_fingerprint: str | None
    certificate_subject: str | None
    certificate_expires_at: datetime | None
    mappings: list[IdentityProviderMappingRead]
    mapping_count: int
    active: bool
    jit_provisioning: bool
    created_at: datetime
    updated_at: datetime

    @model_validator(mode="before")
    @classmethod
    def _from_model(cls, data: Any) -> Any:
        if isinstance(data, dict | BaseModel):
            return data  # already a read shape (a re-validation), not the ORM object
        facts = certificate_facts(data.certificate)
        mappings = list(data.mappings or [])
        return {
            "id": data.id,
            "org_id": data.org_id,
            "name": data.name,
            "type": data.type,
            "metadata_url": data.metadata_url,
            "entity_id": data.entity_id,
            "sso_url": data.sso_url,
            "certificate": data.certificate,
            "certificate_fingerprint": facts.fingerprint,
            "certificate_subject": facts.subject,
            "certificate_expires_at": facts.expires_at,
            "mappings": mappings,
            "mapping_count": len(mappings),
            "active": data.active,
            "jit_provisioning": bool(data.jit_provisioning),
            "created_at": data.created_at,
            "updated_at": data.updated_at,
        }


class IdentityProviderRead(IdentityProviderSummary):
    """One configuration: also the PEM, which is public key material, not a secret."""

    certificate: str
