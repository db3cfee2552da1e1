"""ldap-auth on real traffic: a Gateway on loopback binding against a real OpenLDAP ``slapd``
(Debian package slapd, started per module by ``tests.support.ldapserver``) over ldap://,
StartTLS and ldaps://, with consumers whose credentials went through the management
service's own validation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from portico.gateway.plugins.ldap_auth.directory import canonical_dn, escape_dn_value
from portico.gateway.plugins.ldap_auth.runtime import CACHE_SECONDS
from tests.gateway.plugins.test_auth_runtime import basic, consumer, document, echoed
from tests.gateway.test_pipeline import plugin
from tests.support.ldapserver import USERS_DN, LdapServer, User

LOOPBACK = ("127.0.0.0/8",)
ALICE, BOB = User("alice", "alice-pw"), User("bob", "b0b:pw with space")
JOHN = User("Smith, John", "john-pw")  # a comma in the RDN value: escaped in the DN
CAROL = User("carol", "carol-pw")  # in the directory, held by no consumer
CONSUMERS = [
    consumer("alice", {"ldap-auth": {"user_dn": ALICE.dn}}),
    consumer("bob", {"ldap-auth": {"user_dn": BOB.dn.upper()}}),  # DNs match case-insensitively
    consumer("john", {"ldap-auth": {"user_dn": JOHN.dn}}),
]


@pytest.fixture(scope="module")
def directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LdapServer]:
    users = (ALICE, BOB, JOHN, CAROL)
    with LdapServer(tmp_path_factory.mktemp("slapd"), users) as server:
        yield server


def ldap(uri: str, *after: dict[str, Any], **config: Any) -> list[dict[str, Any]]:
    return [plugin("ldap-auth", 104, ldap_uri=uri, base_dn=USERS_DN, **config), *after]


def watch(gw: Any) -> list[str | None]:
    seen: list[str | None] = []
    gw.observers.append(lambda _, ctx: seen.append(ctx.consumer.username if ctx.consumer else None))
    return seen


async def test_the_bound_user_is_the_consumer_holding_the_dn(
    served: Any, backend: int, directory: LdapServer
) -> None:
    gw, client, _ = await served(LOOPBACK)
    seen = watch(gw)
    chain = ldap(directory.uri, plugin("consumer-restriction", 150, whitelist=["alice", "john"]))
    await gw.apply(document(backend, chain, CONSUMERS))
    forwarded = echoed(await client.get("/x", headers=basic("alice", "alice-pw")))
    assert forwarded["headers"]["authorization"] == basic("alice", "alice-pw")["Authorization"]
    # bob authenticates (his password holds a colon and spaces), and is then the consumer
    # the route's restriction refuses
    refused = await client.get("/x", headers=basic("bob", BOB.password))
    assert refused.status_code == 403
    echoed(await client.get("/x", headers=basic("Smith, John", "john-pw")))
    assert seen == ["alice", "bob", "john"]


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({}, "Missing authorization in request"),
        ({"Authorization": "Bearer abc"}, "Invalid authorization in request"),
        (basic("alice", "wrong"), "Invalid user authorization"),
        (basic("mallory", "alice-pw"), "Invalid user authorization"),
        # an empty password would be an unauthenticated bind, which the directory accepts
        (basic("alice", ""), "Invalid user authorization"),
        # carol binds, but no consumer holds her DN
        (basic("carol", "carol-pw"), "Invalid user authorization"),
        # DN injection: what the client types stays one RDN value
        (basic(f"alice,{USERS_DN}", "alice-pw"), "Invalid user authorization"),
        (basic("alice+sn=user", "alice-pw"), "Invalid user authorization"),
        (basic("*", "alice-pw"), "Invalid user authorization"),
        (basic("alice\x00", "alice-pw"), "Invalid user authorization"),
        (basic(" alice", "alice-pw"), "Invalid user authorization"),
    ],
)
async def test_refusals_are_401_with_a_basic_challenge(
    served: Any, backend: int, directory: LdapServer, headers: dict[str, str], message: str
) -> None:
    gw, client, _ = await served(LOOPBACK)
    seen = watch(gw)
    await gw.apply(document(backend, ldap(directory.uri), CONSUMERS))
    response = await client.get("/x", headers=headers)
    assert response.status_code == 401
    assert response.json() == {"message": message}
    assert response.headers["www-authenticate"] == 'Basic realm="ldap"'
    assert seen == [None]


def test_usernames_are_escaped_as_one_rdn_value() -> None:
    assert escape_dn_value(f"alice,{USERS_DN}") == r"alice\,ou\=users\,dc\=example\,dc\=org"
    assert escape_dn_value("a+b") == r"a\+b"
    assert escape_dn_value("#x ") == r"\#x\ "
    assert escape_dn_value("nul\x00") == r"nul\00"
    assert canonical_dn(r"CN=Smith\2C John , OU=users,dc=Example") == canonical_dn(
        r"cn=smith\, john,ou=users,dc=example"
    )


@pytest.mark.parametrize("kind", ["starttls", "ldaps"])
async def test_tls_without_verification(
    served: Any, backend: int, directory: LdapServer, kind: str
) -> None:
    gw, client, _ = await served(LOOPBACK)
    uri = directory.uri if kind == "starttls" else directory.tls_uri
    await gw.apply(document(backend, ldap(uri, use_tls=True), CONSUMERS))
    echoed(await client.get("/x", headers=basic("alice", "alice-pw")))


async def test_tls_verification_trusts_only_known_certificates(
    served: Any, backend: int, directory: LdapServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    gw, client, _ = await served(LOOPBACK)
    for kind, uri in (("starttls", directory.uri), ("ldaps", directory.tls_uri)):
        chain = ldap(uri, use_tls=True, tls_verify=True)
        await gw.apply(document(backend, chain, CONSUMERS, version=len(kind)))
        # self-signed, not among the trusted CAs: the directory cannot be trusted to answer
        untrusted = await client.get("/x", headers=basic("alice", "alice-pw"))
        assert untrusted.status_code == 503, kind
        assert untrusted.json() == {"message": "LDAP server unavailable"}
    # once the certificate is trusted (OpenSSL's SSL_CERT_FILE), the same binds pass
    monkeypatch.setenv("SSL_CERT_FILE", str(directory.cert_path))
    for version, uri in enumerate((directory.uri, directory.tls_uri), start=10):
        chain = ldap(uri, use_tls=True, tls_verify=True)
        await gw.apply(document(backend, chain, CONSUMERS, version=version))
        echoed(await client.get("/x", headers=basic("alice", "alice-pw")))


async def test_the_directory_is_reached_through_the_egress_guard(
    served: Any, backend: int, directory: LdapServer
) -> None:
    gw, client, _ = await served()  # loopback not allowed
    await gw.apply(document(backend, ldap(directory.uri), CONSUMERS))
    refused = await client.get("/x", headers=basic("alice", "alice-pw"))
    assert refused.status_code == 503


async def test_a_bind_is_remembered_briefly_and_a_directory_down_is_503(
    served: Any, backend: int, tmp_path: Path
) -> None:
    gw, client, clock = await served(LOOPBACK)
    seen = watch(gw)
    with LdapServer(tmp_path / "slapd", (ALICE, BOB)) as own:
        await gw.apply(document(backend, ldap(own.uri), CONSUMERS))
        echoed(await client.get("/x", headers=basic("alice", "alice-pw")))
        own.stop()
        # the warm path does not ask the directory: it still works with the directory gone
        echoed(await client.get("/x", headers=basic("alice", "alice-pw")))
        # ... but only for what was verified: another password is not let in by the cache
        wrong = await client.get("/x", headers=basic("alice", "alice-pW"))
        assert wrong.status_code == 503 and wrong.json() == {"message": "LDAP server unavailable"}
        # ... as it was sent: the same credentials spelled otherwise are bound again
        spelled = {"Authorization": "basic " + basic("alice", "alice-pw")["Authorization"][6:]}
        respelled = await client.get("/x", headers=spelled)
        assert respelled.status_code == 503
        down = await client.get("/x", headers=basic("bob", BOB.password))
        assert down.status_code == 503
        clock.now += CACHE_SECONDS + 1
        expired = await client.get("/x", headers=basic("alice", "alice-pw"))
        assert expired.status_code == 503
        own.start()  # back on the same port
        echoed(await client.get("/x", headers=basic("alice", "alice-pw")))
    assert seen == ["alice", "alice", None, None, None, None, "alice"]
