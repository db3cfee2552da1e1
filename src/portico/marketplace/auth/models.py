"""ID-token signing keys and site settings (the identity provider's web API key)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.clock import utcnow
from portico.core.db.base import Base
from portico.core.db.types import UTCDateTime, json_type


class IdpSigningKey(Base):
    """An asymmetric key signing ID tokens. The private half is stored encrypted under the
    server secret; the public half is served as a JWK. Retired keys stay published until the
    tokens they signed have expired."""

    __tablename__ = "idp_signing_keys"

    kid: Mapped[str] = mapped_column(String(64), primary_key=True)
    algorithm: Mapped[str] = mapped_column(String(16))
    private_key_encrypted: Mapped[str] = mapped_column(Text)
    public_jwk: Mapped[dict[str, Any]] = mapped_column(json_type())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    retired_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)


class SiteSetting(Base):
    """A site-wide setting; ``secret`` values are stored encrypted and never returned."""

    __tablename__ = "site_settings"

    key: Mapped[str] = mapped_column(String(128), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    secret: Mapped[bool] = mapped_column(Boolean, default=False)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)
