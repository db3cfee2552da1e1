"""One OpenID Provider as the gateway knows it: its discovery document and its signing keys,
fetched through the SSRF guard and cached.

* Cached for ``METADATA_TTL``/``KEYS_TTL`` seconds of the gateway clock; once stale they keep
  being served while a single background fetch refreshes them, and if that fetch fails (the
  provider briefly down) the last good copy stays in service (stale-while-error).
* A token signed with a ``kid`` the cached set lacks (the provider rotated its keys) may force
  one refetch, at most one per ``REFETCH_INTERVAL`` seconds per provider: garbage ``kid``s
  cannot turn the gateway into a load generator against the provider.
* Only when nothing was ever fetched does a request wait for the provider; if it cannot be
  reached then, :class:`ProviderUnavailable` (the plugin answers 503).

A ``Provider`` is a shared resource (``RuntimeServices.shared``) keyed by the discovery URL and
the connection settings: every route using the provider, and the next configuration snapshot,
reuse its cache.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa

from portico.core.egress import (
    BodyTooLarge,
    EgressRefused,
    guarded_get,
    guarded_request,
    read_bounded,
)
from portico.gateway.egress import EgressGuard

logger = logging.getLogger("portico.gateway.plugins.openid_connect")

METADATA_TTL = 3600.0
KEYS_TTL = 300.0
#: at least this many seconds between two refetches forced by an unknown ``kid``
REFETCH_INTERVAL = 10.0
#: a discovery document or a JWKS larger than this is refused (a provider's is a few KiB)
MAX_DOCUMENT = 512 * 1024

_RSA_ALGORITHMS = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"})
_EC_ALGORITHMS = {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}


class ProviderUnavailable(Exception):
    """The provider could not be reached (or answered nonsense) and nothing is cached."""


@dataclass(frozen=True, slots=True)
class Metadata:
    issuer: str
    jwks_uri: str
    authorization_endpoint: str | None
    token_endpoint: str | None
    end_session_endpoint: str | None


@dataclass(frozen=True, slots=True)
class SigningKey:
    kid: str | None
    #: a loaded cryptography public key (parsed once per fetch, not per token)
    key: Any
    #: the JWS algorithms this key may verify, derived from its type (never HMAC, never none)
    algorithms: frozenset[str]


class KeySet:
    """The provider's signature keys by ``kid``; ``generation`` grows with every fetch that
    changed them (what a cache of verified tokens is keyed on)."""

    __slots__ = ("by_kid", "generation", "keys")

    def __init__(self, keys: list[SigningKey], generation: int) -> None:
        self.keys = keys
        self.by_kid = {key.kid: key for key in keys if key.kid is not None}
        self.generation = generation

    def find(self, kid: str | None) -> SigningKey | None:
        if kid is not None:
            return self.by_kid.get(kid)
        return self.keys[0] if len(self.keys) == 1 else None  # no kid: only if unambiguous


def algorithms_of(jwk: Mapping[str, Any], key: Any) -> frozenset[str]:
    """The algorithms a JWK may verify: from its key type (RFC 7518 §6, RFC 8037), narrowed to
    its ``alg`` when it names one. An HMAC ("oct") key, or an ``alg`` that does not fit the
    key, gives none: a public key can never become an HMAC secret."""
    if isinstance(key, rsa.RSAPublicKey):
        allowed = _RSA_ALGORITHMS if key.key_size >= 2048 else frozenset()
    elif isinstance(key, ec.EllipticCurvePublicKey):
        curve = {"secp256r1": "P-256", "secp384r1": "P-384", "secp521r1": "P-521"}.get(
            key.curve.name
        )
        allowed = frozenset({_EC_ALGORITHMS[curve]}) if curve else frozenset()
    elif isinstance(key, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey):
        allowed = frozenset({"EdDSA"})
    else:
        allowed = frozenset()
    named = jwk.get("alg")
    if isinstance(named, str):
        allowed = allowed & {named}
    return allowed


def parse_jwks(document: Any) -> list[SigningKey]:
    """The usable signature keys of a JWKS document; keys for encryption, private or
    symmetric keys and keys PyJWT cannot load are skipped."""
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise ValueError("not a JWKS document (no keys array)")
    found: list[SigningKey] = []
    for jwk in document["keys"]:
        if not isinstance(jwk, dict) or jwk.get("use", "sig") != "sig":
            continue
        if jwk.get("kty") not in ("RSA", "EC", "OKP") or "d" in jwk:
            continue  # "oct" is a shared secret; "d" is a private key published by mistake
        try:
            key = jwt.PyJWK(jwk).key
        except (jwt.PyJWTError, ValueError, TypeError, KeyError):
            continue
        algorithms = algorithms_of(jwk, key)
        kid = jwk.get("kid")
        if algorithms:
            found.append(SigningKey(kid if isinstance(kid, str) else None, key, algorithms))
    return found


def parse_metadata(document: Any) -> Metadata:
    if not isinstance(document, dict):
        raise ValueError("the discovery document is not a JSON object")

    def text(name: str, required: bool = False) -> str | None:
        value = document.get(name)
        if isinstance(value, str) and value:
            return value
        if required:
            raise ValueError(f"the discovery document has no {name}")
        return None

    return Metadata(
        issuer=text("issuer", True) or "",
        jwks_uri=text("jwks_uri", True) or "",
        authorization_endpoint=text("authorization_endpoint"),
        token_endpoint=text("token_endpoint"),
        end_session_endpoint=text("end_session_endpoint"),
    )


class Provider:
    def __init__(
        self,
        discovery: str,
        *,
        client: httpx.AsyncClient,
        guard: EgressGuard,
        timeout: float,
        now: Callable[[], float],
        own_client: bool = False,
    ) -> None:
        self.discovery = discovery
        self.client = client
        self.guard = guard
        self.timeout = timeout
        self.now = now
        self._own_client = own_client
        self.metadata: Metadata | None = None
        self.keys: KeySet | None = None
        self._metadata_at = 0.0
        self._keys_at = 0.0
        self._forced_at: float | None = None
        self._generation = 0
        self._refreshing: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    # --- what requests call -------------------------------------------------------------

    def cached(self) -> tuple[Metadata, KeySet] | None:
        """The cached metadata and keys, without waiting; a stale copy starts one background
        refresh and is served meanwhile. None: nothing cached yet (call :meth:`load`)."""
        metadata, keys = self.metadata, self.keys
        if metadata is None or keys is None:
            return None
        now = self.now()
        if now - self._keys_at >= KEYS_TTL or now - self._metadata_at >= METADATA_TTL:
            self._refresh_in_background()
        return metadata, keys

    async def load(self) -> tuple[Metadata, KeySet]:
        """Metadata and keys, fetched now if nothing is cached; :class:`ProviderUnavailable`
        when they cannot be had."""
        found = self.cached()
        if found is not None:
            return found
        async with self._lock:  # one fetch for all the requests that arrived meanwhile
            if self.metadata is None or self.keys is None:
                await self._fetch(force_keys=True)
        assert self.metadata is not None and self.keys is not None
        return self.metadata, self.keys

    async def refetch_for(self, kid: str | None) -> KeySet | None:
        """The key set after one refetch forced by a token whose ``kid`` is unknown; None when
        the rate limit allows none now (or the provider cannot be reached: the old keys stay)."""
        async with self._lock:
            keys = self.keys
            if keys is not None and keys.find(kid) is not None:
                return keys  # another request's refetch found it meanwhile
            now = self.now()
            if self._forced_at is not None and now - self._forced_at < REFETCH_INTERVAL:
                return None
            self._forced_at = now
            try:
                await self._fetch(force_keys=True)
            except ProviderUnavailable as error:
                logger.warning("openid-connect: refetching %s failed: %s", self.discovery, error)
                return None
            return self.keys

    # --- fetching -----------------------------------------------------------------------

    def _refresh_in_background(self) -> None:
        if self._refreshing is not None and not self._refreshing.done():
            return
        self._refreshing = asyncio.get_running_loop().create_task(self._refresh())

    async def _refresh(self) -> None:
        async with self._lock:
            try:
                await self._fetch(force_keys=False)
            except ProviderUnavailable as error:
                # stale-while-error: the last good copy serves until the provider is back;
                # the next try waits for the TTL to run out again, not for the next request
                logger.warning(
                    "openid-connect: %s unreachable, serving cached keys: %s",
                    self.discovery,
                    error,
                )
                now = self.now()
                self._metadata_at = now - METADATA_TTL + REFETCH_INTERVAL
                self._keys_at = now - KEYS_TTL + REFETCH_INTERVAL

    async def _fetch(self, *, force_keys: bool) -> None:
        now = self.now()
        metadata = self.metadata
        if metadata is None or now - self._metadata_at >= METADATA_TTL:
            try:
                metadata = parse_metadata(await self._get_json(self.discovery))
            except ValueError as error:
                raise ProviderUnavailable(f"{self.discovery}: {error}") from None
            self.metadata, self._metadata_at = metadata, now
        if force_keys or self.keys is None or now - self._keys_at >= KEYS_TTL:
            try:
                keys = parse_jwks(await self._get_json(metadata.jwks_uri))
            except ValueError as error:
                raise ProviderUnavailable(f"{metadata.jwks_uri}: {error}") from None
            if self.keys is None or keys != self.keys.keys:
                self._generation += 1
                self.keys = KeySet(keys, self._generation)
            self._keys_at = now

    async def _get_json(self, url: str) -> Any:
        try:
            async with asyncio.timeout(self.timeout):
                response = await guarded_get(self.client, self.guard, url)
                body = await read_bounded(response, MAX_DOCUMENT)
        except TimeoutError:
            raise ProviderUnavailable(f"{url}: no answer in {self.timeout:g} s") from None
        except (httpx.HTTPError, EgressRefused, BodyTooLarge, OSError) as error:
            raise ProviderUnavailable(f"{url}: {error}") from None
        if response.status_code != 200:
            raise ProviderUnavailable(f"{url} answered {response.status_code}")
        try:
            return json.loads(body)
        except ValueError:
            raise ProviderUnavailable(f"{url} did not answer JSON") from None

    async def post_form(
        self, url: str, form: dict[str, str], headers: dict[str, str]
    ) -> tuple[int, Any]:
        """POST a form to one of the provider's endpoints (token, refresh): its status and
        JSON answer (None when not JSON); :class:`ProviderUnavailable` when unreachable."""
        try:
            async with asyncio.timeout(self.timeout):
                response = await guarded_request(
                    self.client, self.guard, "POST", url, data=form, headers=headers, stream=True
                )
                body = await read_bounded(response, MAX_DOCUMENT)
        except TimeoutError:
            raise ProviderUnavailable(f"{url}: no answer in {self.timeout:g} s") from None
        except (httpx.HTTPError, EgressRefused, BodyTooLarge, OSError) as error:
            raise ProviderUnavailable(f"{url}: {error}") from None
        try:
            return response.status_code, json.loads(body)
        except ValueError:
            return response.status_code, None

    async def aclose(self) -> None:
        task = self._refreshing
        if task is not None and not task.done():
            task.cancel()
        if self._own_client:
            await self.client.aclose()


def provider_factory(
    discovery: str,
    *,
    client: httpx.AsyncClient,
    guard: EgressGuard,
    timeout: float,
    now: Callable[[], float],
    ssl_verify: bool,
) -> Callable[[], Provider]:
    """What ``RuntimeServices.shared`` builds the provider with: the gateway's shared client,
    or (``ssl_verify`` false) a client of its own that does not check certificates."""

    def build() -> Provider:
        if ssl_verify:
            return Provider(discovery, client=client, guard=guard, timeout=timeout, now=now)
        own = httpx.AsyncClient(verify=False, trust_env=False)  # noqa: S501 (the config says)
        return Provider(
            discovery, client=own, guard=guard, timeout=timeout, now=now, own_client=True
        )

    return build
