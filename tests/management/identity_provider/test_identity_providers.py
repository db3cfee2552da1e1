"""Identity-provider (SAML) configurations over HTTP: the 0-mappings-is-inactive rule,
certificates, every kind of bad input, permissions, tenancy, audit."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from functools import cache
from typing import Any

import httpx
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from tests.conftest import Account, Factory, Org

EMAIL_CLAIM = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress"
EMAIL = {"attribute": EMAIL_CLAIM, "userField": "email"}
NAME = {"attribute": "displayName", "userField": "displayName"}
GROUPS = {"attribute": "memberOf", "userField": "groups"}


def _certificate(common_name: str, *, expired: bool, key_type: str) -> x509.Certificate:
    key: Any = (
        ec.generate_private_key(ec.SECP256R1())
        if key_type == "ec"
        else rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    # Fixed dates far from today either way: the test never depends on when it runs.
    start, end = (
        (datetime(2001, 1, 1, tzinfo=UTC), datetime(2002, 1, 1, tzinfo=UTC))
        if expired
        else (datetime(2020, 1, 1, tzinfo=UTC), datetime(2090, 1, 1, tzinfo=UTC))
    )
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .sign(key, hashes.SHA256())
    )


@cache
def certificate(kind: str = "valid") -> x509.Certificate:
    if kind == "expired":
        return _certificate("old-idp.example.com", expired=True, key_type="ec")
    if kind == "rsa":
        return _certificate("rsa-idp.example.com", expired=False, key_type="rsa")
    return _certificate("idp.example.com", expired=False, key_type="ec")


def pem(kind: str = "valid") -> str:
    return certificate(kind).public_bytes(serialization.Encoding.PEM).decode()


def fingerprint(kind: str = "valid") -> str:
    return ":".join(f"{b:02X}" for b in certificate(kind).fingerprint(hashes.SHA256()))


def url(org: Org, suffix: str = "") -> str:
    return f"/api/orgs/{org.id}/identity-providers{suffix}"


def body(**overrides: object) -> dict[str, object]:
    return {
        "name": "Corporate SSO",
        "entityId": "https://idp.example.com/saml/metadata",
        "ssoUrl": "https://idp.example.com/saml/sso",
        "certificate": pem(),
        **overrides,
    }


async def create(
    client: httpx.AsyncClient, org: Org, who: Account, **overrides: object
) -> httpx.Response:
    return await client.post(url(org), json=body(**overrides), headers=who.headers)


async def test_zero_mappings_is_inactive_until_mappings_are_saved(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    created = await create(client, org, admin)
    assert created.status_code == 201, created.text
    idp = created.json()
    assert idp["orgId"] == str(org.id)
    assert idp["type"] == "saml"
    assert idp["mappings"] == [] and idp["mappingCount"] == 0
    assert idp["active"] is False
    assert idp["certificate"] == pem()
    assert idp["certificateFingerprint"] == fingerprint()
    assert idp["certificateSubject"] == "CN=idp.example.com"
    assert idp["certificateExpiresAt"].startswith("2090-01-01T00:00:00")

    got = await client.get(url(org, f"/{idp['id']}"), headers=admin.headers)
    assert got.status_code == 200 and got.json() == idp

    listed = (await client.get(url(org), headers=admin.headers)).json()
    assert listed["total"] == 1 and listed["page"] == 1 and listed["size"] == 20
    item = listed["items"][0]
    assert "certificate" not in item  # lists never echo the PEM
    assert item == {k: v for k, v in idp.items() if k != "certificate"}

    patched = await client.patch(
        url(org, f"/{idp['id']}"), json={"mappings": [EMAIL, GROUPS]}, headers=admin.headers
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["mappings"] == [EMAIL, GROUPS]
    assert patched.json()["mappingCount"] == 2 and patched.json()["active"] is True
    assert patched.json()["name"] == "Corporate SSO"  # untouched fields kept

    active = (await client.get(url(org) + "?active=true", headers=admin.headers)).json()
    assert [i["id"] for i in active["items"]] == [idp["id"]] and active["total"] == 1
    inactive = (await client.get(url(org) + "?active=false", headers=admin.headers)).json()
    assert inactive["items"] == [] and inactive["total"] == 0

    cleared = await client.patch(
        url(org, f"/{idp['id']}"), json={"mappings": []}, headers=admin.headers
    )
    assert cleared.json()["active"] is False and cleared.json()["mappingCount"] == 0
    inactive = (await client.get(url(org) + "?active=false", headers=admin.headers)).json()
    assert [i["id"] for i in inactive["items"]] == [idp["id"]]

    deleted = await client.delete(url(org, f"/{idp['id']}"), headers=admin.headers)
    assert deleted.status_code == 204
    missing = await client.get(url(org, f"/{idp['id']}"), headers=admin.headers)
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/problem+json"
    assert missing.json()["detail"] == "identity provider not found"


async def test_certificates_expired_rsa_and_local_http(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    expired = await create(client, org, admin, name="old", certificate=pem("expired"))
    assert expired.status_code == 201, expired.text
    assert expired.json()["certificateExpiresAt"].startswith("2002-01-01T00:00:00")
    assert expired.json()["certificateSubject"] == "CN=old-idp.example.com"

    # pasted with Windows line ends and surrounding blank lines: stored canonical
    pasted = "\r\n" + pem("rsa").replace("\n", "\r\n") + "\r\n"
    rsa_idp = await create(
        client,
        org,
        admin,
        name="local test IdP",
        certificate=pasted,
        ssoUrl="http://localhost:8080/sso",
        mappings=[EMAIL, NAME, GROUPS, {**GROUPS, "attribute": "roles"}],
    )
    assert rsa_idp.status_code == 201, rsa_idp.text
    assert rsa_idp.json()["certificate"] == pem("rsa")
    assert rsa_idp.json()["certificateFingerprint"] == fingerprint("rsa")
    assert rsa_idp.json()["active"] is True and rsa_idp.json()["mappingCount"] == 4

    loopback = await create(client, org, admin, name="loopback", ssoUrl="http://127.0.0.1/sso")
    assert loopback.status_code == 201, loopback.text

    rotated = await client.patch(
        url(org, f"/{expired.json()['id']}"),
        json={"certificate": pem(), "ssoUrl": "https://new.example.com/sso"},
        headers=admin.headers,
    )
    assert rotated.status_code == 200, rotated.text
    assert rotated.json()["certificateFingerprint"] == fingerprint()
    assert rotated.json()["ssoUrl"] == "https://new.example.com/sso"


BAD_CREATES: list[tuple[dict[str, object], str, str | None]] = [
    ({"name": None}, "/name", "$.name: string expected"),
    ({"name": 5}, "/name", "$.name: string expected"),
    ({"name": ""}, "/name", "$.name: must be at least 1 characters long"),
    ({"name": "x" * 101}, "/name", "$.name: must be at most 100 characters long"),
    ({"name": " padded"}, "/name", None),
    ({"type": "oidc"}, "/type", "$.type: must be one of 'saml'"),
    ({"entityId": ""}, "/entityId", None),
    ({"entityId": "https://x/" + "a" * 1024}, "/entityId", None),
    ({"entityId": "has space"}, "/entityId", None),
    ({"entityId": ["urn:x"]}, "/entityId", "$.entityId: string expected"),
    (
        {"ssoUrl": "http://idp.example.com/sso"},
        "/ssoUrl",
        "$.ssoUrl: must use https (http only for localhost or 127.0.0.1)",
    ),
    ({"ssoUrl": "ftp://idp.example.com/sso"}, "/ssoUrl", None),
    ({"ssoUrl": "/relative/sso"}, "/ssoUrl", None),
    ({"ssoUrl": "https://user:pw@idp.example.com/sso"}, "/ssoUrl", None),
    ({"ssoUrl": "https://idp.example.com:99999/sso"}, "/ssoUrl", None),
    ({"ssoUrl": "https://idp.example.com/" + "a" * 2048}, "/ssoUrl", None),
    (
        {"certificate": "not a certificate"},
        "/certificate",
        "$.certificate: not a PEM X.509 certificate",
    ),
    (
        {"certificate": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"},
        "/certificate",
        "$.certificate: not a PEM X.509 certificate",
    ),
    ({"certificate": pem() + pem("rsa")}, "/certificate", None),
    ({"certificate": pem().replace("CERTIFICATE", "PUBLIC KEY")}, "/certificate", None),
    ({"certificate": 42}, "/certificate", "$.certificate: string expected"),
    ({"mappings": "email"}, "/mappings", "$.mappings: array expected"),
    ({"mappings": [{"attribute": "mail", "userField": "phone"}]}, "/mappings/0/userField", None),
    ({"mappings": [{"attribute": "", "userField": "email"}]}, "/mappings/0/attribute", None),
    ({"mappings": [{"attribute": "a" * 257, "userField": "email"}]}, "/mappings/0/attribute", None),
    (
        {"mappings": [{"attribute": "mail"}]},
        "/mappings/0/userField",
        "required property 'userField' not found",
    ),
    (
        {"mappings": [{"attribute": "mail", "user_field": "email"}]},
        "/mappings/0/user_field",
        None,
    ),
    (
        {"mappings": [EMAIL, GROUPS, {"attribute": "mail", "userField": "email"}]},
        "/mappings/2/userField",
        "$.mappings[2].userField: 'email' may be mapped only once",
    ),
    ({"mappings": [NAME, {**NAME, "attribute": "cn"}]}, "/mappings/1/userField", None),
    ({"mappings": [GROUPS, GROUPS]}, "/mappings/1", None),
    ({"mappings": [GROUPS] * 51}, "/mappings", "$.mappings: must have at most 50 items"),
    ({"colour": "red"}, "/colour", "property 'colour' is not allowed"),
    ({"sso_url": "https://x.example.com"}, "/sso_url", "property 'sso_url' is not allowed"),
]


async def test_bad_input_is_a_400_naming_the_field_and_stores_nothing(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    for overrides, pointer, detail in BAD_CREATES:
        response = await client.post(url(org), json=body(**overrides), headers=admin.headers)
        assert response.status_code == 400, (overrides, response.text)
        assert response.headers["content-type"] == "application/problem+json"
        problem = response.json()
        assert pointer in [e["pointer"] for e in problem["errors"]], (overrides, problem)
        if detail is not None:
            assert problem["detail"] == detail, (overrides, problem)
    missing = await client.post(url(org), json={"name": "x"}, headers=admin.headers)
    assert missing.status_code == 400
    assert {e["pointer"] for e in missing.json()["errors"]} == {
        "/entityId",
        "/ssoUrl",
        "/certificate",
    }
    listed = (await client.get(url(org), headers=admin.headers)).json()
    assert listed["total"] == 0


async def test_bad_patches_change_nothing(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    idp = (await create(client, org, admin, mappings=[EMAIL])).json()
    bad: list[tuple[dict[str, object], str, str | None]] = [
        (
            {"mappings": None},
            "/mappings",
            "$.mappings: must not be null; omit the field to keep it",
        ),
        ({"ssoUrl": None}, "/ssoUrl", None),
        ({"certificate": "garbage"}, "/certificate", "$.certificate: not a PEM X.509 certificate"),
        ({"mappings": [EMAIL, EMAIL]}, "/mappings/1/userField", None),
        ({"ssoUrl": "http://idp.example.com/sso"}, "/ssoUrl", None),
        ({"type": "ldap"}, "/type", None),
        ({"name": True}, "/name", "$.name: string expected"),
        ({"entityId": 1}, "/entityId", "$.entityId: string expected"),
        ({"active": True}, "/active", "property 'active' is not allowed"),
    ]
    for patch, pointer, detail in bad:
        response = await client.patch(url(org, f"/{idp['id']}"), json=patch, headers=admin.headers)
        assert response.status_code == 400, (patch, response.text)
        problem = response.json()
        assert pointer in [e["pointer"] for e in problem["errors"]], (patch, problem)
        if detail is not None:
            assert problem["detail"] == detail, (patch, problem)
    after = (await client.get(url(org, f"/{idp['id']}"), headers=admin.headers)).json()
    assert after == idp


async def test_every_change_is_audited(client: httpx.AsyncClient, org: Org, admin: Account) -> None:
    idp = (await create(client, org, admin)).json()
    await client.patch(url(org, f"/{idp['id']}"), json={"mappings": [EMAIL]}, headers=admin.headers)
    await client.delete(url(org, f"/{idp['id']}"), headers=admin.headers)
    log = (await client.get(f"/api/orgs/{org.id}/audit-log", headers=admin.headers)).json()
    entries = [e for e in log["items"] if e["entityId"] == idp["id"]]
    assert [e["action"] for e in entries] == [
        "identity_provider.delete",
        "identity_provider.update",
        "identity_provider.create",
    ]
    delete, update, create_ = entries
    assert create_["before"] is None and create_["after"]["active"] is False
    assert update["before"]["mappingCount"] == 0 and update["after"]["mappingCount"] == 1
    assert update["after"]["active"] is True
    assert update["after"]["certificateFingerprint"] == fingerprint()
    assert "certificate" not in update["after"]  # the fingerprint identifies it
    assert delete["before"]["name"] == "Corporate SSO" and delete["after"] is None
    assert update["actor"]["email"] == admin.email


async def test_names_are_unique_per_org(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    first = (await create(client, org, admin)).json()
    again = await create(client, org, admin)
    assert again.status_code == 409
    assert again.json()["detail"] == "an identity provider named 'Corporate SSO' already exists"
    second = (await create(client, org, admin, name="Backup SSO")).json()
    renamed = await client.patch(
        url(org, f"/{second['id']}"), json={"name": "Corporate SSO"}, headers=admin.headers
    )
    assert renamed.status_code == 409
    # renaming to its own name is not a conflict
    same = await client.patch(
        url(org, f"/{first['id']}"), json={"name": "Corporate SSO"}, headers=admin.headers
    )
    assert same.status_code == 200
    other_org = await factory.org()
    other_admin = await factory.user(other_org, roles=("Administrator",))
    assert (await create(client, other_org, other_admin)).status_code == 201


async def test_listing_sorts_filters_and_rejects_unknown_parameters(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    await create(client, org, admin, name="b", mappings=[EMAIL])
    await create(client, org, admin, name="c")
    await create(client, org, admin, name="a", mappings=[GROUPS])

    async def names(query: str = "") -> list[str]:
        response = await client.get(url(org) + query, headers=admin.headers)
        assert response.status_code == 200, response.text
        return [e["name"] for e in response.json()["items"]]

    assert await names() == ["a", "b", "c"]
    assert await names("?sort=-name") == ["c", "b", "a"]
    assert await names("?sort=createdAt,name") == ["b", "c", "a"]
    assert await names("?name=b") == ["b"]
    assert await names("?active=true") == ["a", "b"]
    assert await names("?active=false") == ["c"]
    assert await names("?active=true&name=a") == ["a"]
    paged = (await client.get(url(org) + "?size=2&page=2", headers=admin.headers)).json()
    assert [e["name"] for e in paged["items"]] == ["c"] and paged["total"] == 3
    for bad, parameter in (
        ("?colour=red", "colour"),
        ("?sort=entityId", "sort"),
        ("?active=yes", "active"),
        ("?active=true&active=false", "active"),
        ("?size=0", "size"),
        ("?page=x", "page"),
    ):
        response = await client.get(url(org) + bad, headers=admin.headers)
        assert response.status_code == 400, bad
        assert response.json()["errors"][0]["parameter"] == parameter, bad


async def test_permissions_and_tenancy(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account, viewer: Account
) -> None:
    idp = (await create(client, org, admin)).json()
    one = url(org, f"/{idp['id']}")
    assert (await client.get(url(org), headers=viewer.headers)).status_code == 200
    assert (await client.get(one, headers=viewer.headers)).json() == idp
    for response in (
        await create(client, org, viewer, name="nope"),
        await client.patch(one, json={"mappings": [EMAIL]}, headers=viewer.headers),
        await client.delete(one, headers=viewer.headers),
    ):
        assert response.status_code == 403
        assert response.json()["detail"] == "missing permission 'idp.manage'"
    publisher = await factory.user(org, roles=("API Publisher",))
    denied = await client.patch(one, json={"name": "x"}, headers=publisher.headers)
    assert denied.json()["detail"] == "missing permission 'idp.manage'"
    assert (await client.get(one, headers=admin.headers)).json() == idp  # nothing changed

    other_org = await factory.org()
    outsider = await factory.user(other_org, roles=("Administrator",))
    swapped = f"/api/orgs/{other_org.id}/identity-providers/{idp['id']}"
    assert (await client.get(swapped, headers=outsider.headers)).status_code == 404
    assert (
        await client.patch(swapped, json={"mappings": []}, headers=outsider.headers)
    ).status_code == 404
    assert (await client.delete(swapped, headers=outsider.headers)).status_code == 404
    assert (await client.get(url(org), headers=outsider.headers)).status_code == 404
    assert (await client.get(one, headers=admin.headers)).json() == idp  # still there

    assert (
        await client.get(url(org, f"/{uuid.uuid4()}"), headers=admin.headers)
    ).status_code == 404
    assert (await client.get(url(org, "/not-a-uuid"), headers=admin.headers)).status_code == 404
    assert (await client.delete(url(org, "/not-a-uuid"), headers=admin.headers)).status_code == 404
    assert (await client.get(url(org))).status_code == 401
    assert (await client.post(url(org), json=body())).status_code == 401
