"""The admin API as an OpenID Provider for bearer validation: its discovery document names
the tokens' issuer and the portal's JWKS, and the openid-connect plugin's own parsing and
verification (``gateway.plugins.openid_connect``) accept a signed-in account's ID token
through it."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import httpx
import jwt

from portico.gateway.plugins.openid_connect.provider import KeySet, parse_jwks, parse_metadata
from portico.gateway.plugins.openid_connect.tokens import (
    Expectations,
    header_of,
    key_for,
    verify,
)
from portico.marketplace.auth.keys import AUDIENCE
from tests.marketplace.auth.conftest import sign_in
from tests.marketplace.conftest import SiteFactory, url


async def test_the_discovery_document_leads_a_relying_party_to_the_keys(
    client: httpx.AsyncClient, site: SiteFactory, issuance: None
) -> None:
    account = await site.account()
    signed_in = await sign_in(client, account.email)
    assert signed_in.status_code == 200, signed_in.text
    id_token: str = signed_in.json()["data"]["id_token"]

    answer = await client.get(url("/.well-known/openid-configuration"))  # public
    assert answer.status_code == 200
    document: dict[str, Any] = answer.json()
    metadata = parse_metadata(document)
    assert metadata.issuer.endswith(url(""))  # served at issuer + /.well-known/...
    assert document["id_token_signing_alg_values_supported"] == ["ES256"]

    jwks = await client.get(urlsplit(metadata.jwks_uri).path)
    assert jwks.status_code == 200
    keys = KeySet(parse_jwks(jwks.json()), 1)
    expect = Expectations(metadata.issuer, AUDIENCE, frozenset({"ES256"}))
    header = header_of(id_token)
    issued_at = float(jwt.decode(id_token, options={"verify_signature": False})["iat"])
    claims = verify(id_token, header, key_for(header, keys, expect), expect, now=issued_at)
    assert claims["sub"] == str(account.id)
