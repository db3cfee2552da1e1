"""Config contracts of the security, authentication and traffic plugins: registry entries as
plugins.md's table, the seed's shapes, defaults, required fields, bounds, semantic checks and
the published JSON schema."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from pydantic import ValidationError

from portico.gateway.plugins.base import Category, ConsumerCredential
from portico.gateway.plugins.registry import PLUGINS, PluginCheckError, check_plugin, reason_of

S, A, T = Category.SECURITY, Category.AUTHENTICATION, Category.TRAFFIC

#: plugins.md's table: name → (category, order, re-rank)
TABLE: dict[str, tuple[Category, int, bool]] = {
    "ip-restriction": (S, 10, False),
    "uri-blocker": (S, 20, False),
    "cors": (S, 30, False),
    "csrf": (S, 40, False),
    "waf": (S, 50, False),
    "basic-auth": (A, 101, True),
    "jwt-auth": (A, 102, True),
    "openid-connect": (A, 103, True),
    "ldap-auth": (A, 104, True),
    "consumer-restriction": (S, 150, False),
    "policy-agent": (S, 160, True),
    "limit-req": (T, 200, True),
    "limit-count": (T, 210, True),
    "product-quota": (T, 230, True),
}

DISCOVERY = "https://idp.example.com/.well-known/openid-configuration"

#: the seed's configuration shapes (every seed field present, with its JSON type)
SEED: dict[str, dict[str, Any]] = {
    "ip-restriction": {"whitelist": ["10.0.0.0/8", "192.168.1.7", "2001:db8::/32", "::1"]},
    "uri-blocker": {"block_rules": ["^/admin", r"\.php$"], "rejected_code": 403},
    "cors": {
        "allow_origins": "https://app.example.com,http://localhost:3000",
        "allow_methods": "GET,POST,OPTIONS",
        "allow_headers": "Authorization,Content-Type",
        "max_age": 3600,
    },
    "csrf": {"key": "0123456789abcdef-signing-secret"},
    "waf": {"host": "waf.internal", "port": 9000},
    "consumer-restriction": {"whitelist": ["alice", "bob"]},
    "policy-agent": {"host": "http://opa:8181", "policy": "example1", "with_body": False},
    "basic-auth": {},
    "jwt-auth": {},
    "openid-connect": {
        "client_id": "portal",
        "client_secret": "client-secret",
        "discovery": DISCOVERY,
        "bearer_only": False,
    },
    "ldap-auth": {
        "ldap_uri": "ldap://ldap.example.org:389",
        "base_dn": "ou=users,dc=example,dc=org",
        "uid": "cn",
    },
    "limit-req": {"rate": 10, "burst": 5, "key_type": "var", "key": "remote_addr"},
    "limit-count": {
        "count": 100,
        "time_window": 60,
        "key_type": "var",
        "key": "remote_addr",
        "rejected_code": 429,
    },
    "product-quota": {},
}

#: the fewest fields each plugin accepts, and the defaults then filled in
MINIMAL: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "ip-restriction": (
        {"whitelist": ["10.0.0.1"]},
        {"blacklist": None, "message": "Your IP address is not allowed"},
    ),
    "uri-blocker": (
        {"block_rules": ["^/admin"]},
        {"rejected_code": 403, "rejected_msg": None, "case_insensitive": False},
    ),
    "cors": (
        {},
        {
            "allow_origins": "*",
            "allow_methods": "*",
            "allow_headers": "*",
            "expose_headers": None,
            "max_age": 5,
            "allow_credential": False,
        },
    ),
    "csrf": (
        {"key": "0123456789abcdef"},
        {"expires": 7200, "name": "apisix-csrf-token"},
    ),
    "waf": ({"host": "10.0.0.5", "port": 80}, {"timeout": 1000, "fail_open": False}),
    "consumer-restriction": (
        {"blacklist": ["mallory"]},
        {"whitelist": None, "rejected_code": 403, "rejected_msg": None},
    ),
    "policy-agent": (
        {"host": "https://opa.example.com", "policy": "a/b"},
        {"with_body": False, "timeout": 3000, "ssl_verify": True},
    ),
    "basic-auth": ({}, {"hide_credentials": False}),
    "jwt-auth": (
        {},
        {"header": "authorization", "query": "jwt", "cookie": "jwt", "hide_credentials": False},
    ),
    "openid-connect": (
        {"client_id": "api", "discovery": DISCOVERY, "bearer_only": True},
        {
            "client_secret": None,
            "scope": "openid",
            "realm": "apisix",
            "audience": None,
            "token_signing_alg_values_expected": ["RS256", "ES256"],
            "redirect_uri": None,
            "logout_path": "/logout",
            "timeout": 3,
            "ssl_verify": True,
        },
    ),
    "ldap-auth": (
        {"ldap_uri": "ldaps://ldap.example.org", "base_dn": "dc=example,dc=org"},
        {"uid": "cn", "use_tls": False, "tls_verify": False},
    ),
    "limit-req": (
        {"rate": 1, "burst": 0},
        {
            "key_type": "var",
            "key": "remote_addr",
            "rejected_code": 503,
            "rejected_msg": None,
            "nodelay": False,
        },
    ),
    "limit-count": (
        {"count": 1, "time_window": 1},
        {
            "key_type": "var",
            "key": "remote_addr",
            "rejected_code": 503,
            "rejected_msg": None,
            "policy": "local",
            "redis_url": None,
            "allow_degradation": False,
            "show_limit_quota_header": True,
        },
    ),
    "product-quota": ({}, {"error_policy": "fail_close"}),
}

REQUIRED: dict[str, set[str]] = {
    "ip-restriction": set(),
    "uri-blocker": {"block_rules"},
    "cors": set(),
    "csrf": {"key"},
    "waf": {"host", "port"},
    "consumer-restriction": set(),
    "policy-agent": {"host", "policy"},
    "basic-auth": set(),
    "jwt-auth": set(),
    "openid-connect": {"client_id", "discovery"},
    "ldap-auth": {"ldap_uri", "base_dn"},
    "limit-req": {"rate", "burst"},
    "limit-count": {"count", "time_window"},
    "product-quota": set(),
}

SECRETS: dict[str, frozenset[str]] = {
    "csrf": frozenset({"key"}),
    "openid-connect": frozenset({"client_secret", "session_secret"}),
    "limit-count": frozenset({"redis_url"}),
    "product-quota": frozenset(),
}

CREDENTIALS: dict[str, tuple[set[str], frozenset[str]]] = {
    "basic-auth": ({"username", "password"}, frozenset({"password"})),
    "jwt-auth": ({"key"}, frozenset({"secret"})),
    "ldap-auth": ({"user_dn"}, frozenset()),
}


def refusal(name: str, raw: dict[str, Any]) -> PluginCheckError:
    with pytest.raises(PluginCheckError) as caught:
        check_plugin(name, raw)
    return caught.value


def with_(plugin: str, /, **changes: Any) -> dict[str, Any]:
    return {**MINIMAL[plugin][0], **changes}


def credential_refusal(name: str, raw: dict[str, Any]) -> tuple[str, tuple[str | int, ...]]:
    model = PLUGINS[name].consumer
    assert model is not None
    with pytest.raises(ValidationError) as caught:
        model.model_validate(raw)
    first = min(caught.value.errors(), key=lambda e: e["type"] != "missing")
    return reason_of(first), first["loc"]


# --- registry ------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "entry"), TABLE.items())
def test_registry_entry_matches_the_plugin_table(
    name: str, entry: tuple[Category, int, bool]
) -> None:
    spec = PLUGINS[name]
    assert (spec.name, spec.category, spec.order, spec.reorderable) == (name, *entry)
    assert spec.description


@pytest.mark.parametrize("name", TABLE)
def test_names_are_case_sensitive(name: str) -> None:
    assert "unknown plugin" in refusal(name.upper(), {}).reason


# --- seed shapes and defaults ----------------------------------------------------------------


@pytest.mark.parametrize(("name", "raw"), SEED.items())
def test_seed_shape_validates(name: str, raw: dict[str, Any]) -> None:
    spec, config = check_plugin(name, raw)
    assert spec is PLUGINS[name]
    dumped = config.model_dump()
    assert {key: dumped[key] for key in raw} == raw


@pytest.mark.parametrize(("name", "case"), MINIMAL.items())
def test_defaults_are_filled(name: str, case: tuple[dict[str, Any], dict[str, Any]]) -> None:
    raw, defaults = case
    _, config = check_plugin(name, raw)
    dumped = config.model_dump()
    assert {key: dumped[key] for key in defaults} == defaults


# sorted: a set's order changes with the hash seed, and xdist workers must collect alike
@pytest.mark.parametrize(
    ("name", "field"),
    [(name, field) for name, fields in REQUIRED.items() for field in sorted(fields)],
)
def test_missing_required_field(name: str, field: str) -> None:
    raw = dict(SEED[name])
    raw.pop(field)
    error = refusal(name, raw)
    assert error.reason == f'property "{field}" is required'
    assert error.pointer == f"/{field}"


@pytest.mark.parametrize("name", TABLE)
def test_unknown_property_refused(name: str) -> None:
    error = refusal(name, {**SEED[name], "nope": 1})
    assert (error.reason, error.pointer) == ('property "nope" is not allowed', "/nope")


@pytest.mark.parametrize("name", TABLE)
def test_meta_order_only_for_reorderable_plugins(name: str) -> None:
    raw = {**SEED[name], "_meta": {"order": 105}}
    if TABLE[name][2]:
        _, config = check_plugin(name, raw)
        assert config.meta is not None and config.meta.order == 105
    else:
        error = refusal(name, raw)
        assert error.pointer == "/_meta"
        assert error.reason == f'property "_meta" is not allowed: {name} cannot be re-ranked'


# --- wrong types and bounds ------------------------------------------------------------------

BAD: list[tuple[str, dict[str, Any], str]] = [
    ("ip-restriction", {"whitelist": "10.0.0.1"}, "/whitelist"),
    ("ip-restriction", {"whitelist": []}, "/whitelist"),
    ("ip-restriction", {"whitelist": [10]}, "/whitelist/0"),
    ("ip-restriction", {"whitelist": ["10.0.0.1", "nope"]}, "/whitelist/1"),
    ("ip-restriction", {"blacklist": ["::1/129"]}, "/blacklist/0"),
    ("ip-restriction", with_("ip-restriction", message=""), "/message"),
    ("ip-restriction", with_("ip-restriction", message="x" * 1025), "/message"),
    ("uri-blocker", {"block_rules": []}, "/block_rules"),
    ("uri-blocker", {"block_rules": "^/admin"}, "/block_rules"),
    ("uri-blocker", {"block_rules": [""]}, "/block_rules/0"),
    ("uri-blocker", {"block_rules": ["ok", "("]}, "/block_rules/1"),
    ("uri-blocker", with_("uri-blocker", rejected_code=199), "/rejected_code"),
    ("uri-blocker", with_("uri-blocker", rejected_code=600), "/rejected_code"),
    ("uri-blocker", with_("uri-blocker", rejected_code="403"), "/rejected_code"),
    ("uri-blocker", with_("uri-blocker", rejected_msg=""), "/rejected_msg"),
    ("uri-blocker", with_("uri-blocker", case_insensitive="yes"), "/case_insensitive"),
    ("cors", {"max_age": -2}, "/max_age"),
    ("cors", {"max_age": 86_401}, "/max_age"),
    ("cors", {"max_age": "5"}, "/max_age"),
    ("cors", {"allow_origins": ["https://a.example"]}, "/allow_origins"),
    ("cors", {"allow_methods": ""}, "/allow_methods"),
    ("cors", {"allow_credential": "true"}, "/allow_credential"),
    ("csrf", {"key": "too-short"}, "/key"),
    ("csrf", {"key": 1234567890123456}, "/key"),
    ("csrf", with_("csrf", expires=0), "/expires"),
    ("csrf", with_("csrf", expires=2_592_001), "/expires"),
    ("csrf", with_("csrf", name="bad name"), "/name"),
    ("waf", with_("waf", port=0), "/port"),
    ("waf", with_("waf", port=65_536), "/port"),
    ("waf", with_("waf", port="80"), "/port"),
    ("waf", with_("waf", host=""), "/host"),
    ("waf", with_("waf", timeout=0), "/timeout"),
    ("waf", with_("waf", timeout=60_001), "/timeout"),
    ("waf", with_("waf", fail_open=1), "/fail_open"),
    ("consumer-restriction", {"whitelist": []}, "/whitelist"),
    ("consumer-restriction", {"whitelist": [""]}, "/whitelist/0"),
    ("consumer-restriction", {"whitelist": "alice"}, "/whitelist"),
    ("consumer-restriction", with_("consumer-restriction", rejected_code=600), "/rejected_code"),
    ("consumer-restriction", with_("consumer-restriction", rejected_msg=""), "/rejected_msg"),
    ("policy-agent", with_("policy-agent", host="opa:8181"), "/host"),
    ("policy-agent", with_("policy-agent", host="ftp://opa"), "/host"),
    ("policy-agent", with_("policy-agent", policy=""), "/policy"),
    ("policy-agent", with_("policy-agent", timeout=0), "/timeout"),
    ("policy-agent", with_("policy-agent", with_body="false"), "/with_body"),
    ("policy-agent", with_("policy-agent", ssl_verify=0), "/ssl_verify"),
    ("basic-auth", {"hide_credentials": "no"}, "/hide_credentials"),
    ("jwt-auth", {"header": "bad header"}, "/header"),
    ("jwt-auth", {"query": ""}, "/query"),
    ("jwt-auth", {"cookie": 1}, "/cookie"),
    ("openid-connect", with_("openid-connect", discovery="not-a-url"), "/discovery"),
    ("openid-connect", with_("openid-connect", client_id=""), "/client_id"),
    ("openid-connect", with_("openid-connect", bearer_only="true"), "/bearer_only"),
    ("openid-connect", with_("openid-connect", timeout=0), "/timeout"),
    ("openid-connect", with_("openid-connect", timeout=61), "/timeout"),
    ("openid-connect", with_("openid-connect", realm='a"b'), "/realm"),
    (
        "openid-connect",
        with_("openid-connect", token_signing_alg_values_expected=[]),
        "/token_signing_alg_values_expected",
    ),
    ("openid-connect", with_("openid-connect", redirect_uri="/cb"), "/redirect_uri"),
    ("openid-connect", with_("openid-connect", logout_path="logout"), "/logout_path"),
    ("ldap-auth", with_("ldap-auth", uid="c n"), "/uid"),
    ("ldap-auth", with_("ldap-auth", use_tls="false"), "/use_tls"),
    ("ldap-auth", with_("ldap-auth", base_dn=""), "/base_dn"),
    ("limit-req", {"rate": 0, "burst": 0}, "/rate"),
    ("limit-req", {"rate": 1.5, "burst": 0}, "/rate"),
    ("limit-req", {"rate": "10", "burst": 0}, "/rate"),
    ("limit-req", {"rate": 1, "burst": -1}, "/burst"),
    ("limit-req", {"rate": 1, "burst": 0, "key_type": "other"}, "/key_type"),
    ("limit-req", {"rate": 1, "burst": 0, "key": ""}, "/key"),
    ("limit-req", {"rate": 1, "burst": 0, "rejected_code": 100}, "/rejected_code"),
    ("limit-req", {"rate": 1, "burst": 0, "nodelay": "x"}, "/nodelay"),
    ("limit-count", with_("limit-count", count=0), "/count"),
    ("limit-count", with_("limit-count", count=-5), "/count"),
    ("limit-count", with_("limit-count", time_window=0), "/time_window"),
    ("limit-count", with_("limit-count", time_window=1.5), "/time_window"),
    ("limit-count", with_("limit-count", rejected_code=600), "/rejected_code"),
    ("limit-count", with_("limit-count", policy="redis-cluster"), "/policy"),
    (
        "limit-count",
        with_("limit-count", show_limit_quota_header="yes"),
        "/show_limit_quota_header",
    ),
    ("product-quota", {"error_policy": "fail_sometimes"}, "/error_policy"),
    ("product-quota", {"rejected_code": 429}, "/rejected_code"),
]


@pytest.mark.parametrize(("name", "raw", "pointer"), BAD)
def test_wrong_type_or_bound_names_the_field(name: str, raw: dict[str, Any], pointer: str) -> None:
    error = refusal(name, raw)
    assert error.pointer == pointer
    assert error.reason


@pytest.mark.parametrize(
    ("name", "raw", "reason"),
    [
        ("limit-count", with_("limit-count", count=0), "$.count: must be greater than 0"),
        ("limit-req", {"rate": 1, "burst": -1}, "$.burst: must be greater than or equal to 0"),
        ("waf", with_("waf", port=65_536), "$.port: must be less than or equal to 65535"),
        ("csrf", {"key": "too-short"}, "$.key: must be at least 16 characters long"),
        ("limit-req", {"rate": 1.5, "burst": 0}, "$.rate: integer expected"),
    ],
)
def test_rule_messages_name_the_path(name: str, raw: dict[str, Any], reason: str) -> None:
    assert refusal(name, raw).reason == reason


# --- semantic checks -------------------------------------------------------------------------

EXCLUSIVE = '"whitelist" and "blacklist" are exclusive: give only one'
EITHER = 'property "whitelist" or "blacklist" is required'
VAR_KEY = (
    'key must be a variable name without "$" (e.g. remote_addr, http_x_api_key) '
    'when key_type is "var"'
)
COMBINED_KEY = (
    'key must combine variables such as "$remote_addr $consumer_name" '
    'when key_type is "var_combination"'
)
REDIS_NEEDED = 'property "redis_url" is required when policy is "redis"'
REDIS_URL = "redis_url must be a redis:// or rediss:// URL: scheme://[:password@]host[:port][/db]"

SEMANTIC: list[tuple[str, dict[str, Any], str, str]] = [
    ("ip-restriction", {}, "/whitelist", EITHER),
    (
        "ip-restriction",
        {"whitelist": ["1.1.1.1"], "blacklist": ["2.2.2.2"]},
        "/blacklist",
        EXCLUSIVE,
    ),
    (
        "ip-restriction",
        {"whitelist": ["10.0.0.0/33"]},
        "/whitelist/0",
        "'10.0.0.0/33' is not an IP address or CIDR",
    ),
    ("consumer-restriction", {}, "/whitelist", EITHER),
    ("consumer-restriction", {"whitelist": ["a"], "blacklist": ["b"]}, "/blacklist", EXCLUSIVE),
    (
        "cors",
        {"allow_credential": True},
        "/allow_origins",
        'allow_origins "*" cannot be used when allow_credential is true: list the allowed origins',
    ),
    (
        "cors",
        {"allow_origins": "https://a.example.com/path"},
        "/allow_origins",
        'allow_origins: "https://a.example.com/path" is not an origin (scheme://host[:port])',
    ),
    (
        "cors",
        {"allow_origins": "https://*.example.com"},
        "/allow_origins",
        'allow_origins: "https://*.example.com" is not an origin (scheme://host[:port])',
    ),
    (
        "cors",
        {"allow_origins": "https://a.example.com,"},
        "/allow_origins",
        'allow_origins: "" is not an origin (scheme://host[:port])',
    ),
    (
        "cors",
        {"allow_origins": "https://u:p@a.example.com"},
        "/allow_origins",
        'allow_origins: "https://u:p@a.example.com" is not an origin (scheme://host[:port])',
    ),
    (
        "cors",
        {"allow_origins": "https://a.example.com,*"},
        "/allow_origins",
        'allow_origins: "*" cannot be combined with other origins',
    ),
    (
        "cors",
        {"allow_methods": "GET,PO ST"},
        "/allow_methods",
        'allow_methods: "PO ST" is not an HTTP method',
    ),
    (
        "cors",
        {"allow_headers": "X-Ok,X:Bad"},
        "/allow_headers",
        'allow_headers: "X:Bad" is not a header name',
    ),
    (
        "cors",
        {"expose_headers": "X-Ok,,X-Two"},
        "/expose_headers",
        'expose_headers: "" is not a header name',
    ),
    (
        "waf",
        {"host": "http://waf", "port": 1},
        "/host",
        'host "http://waf" is not a hostname or an IP address',
    ),
    (
        "waf",
        {"host": "1.2.3.999", "port": 1},
        "/host",
        'host "1.2.3.999" is not a hostname or an IP address',
    ),
    (
        "waf",
        {"host": "-waf.internal", "port": 1},
        "/host",
        'host "-waf.internal" is not a hostname or an IP address',
    ),
    (
        "waf",
        {"host": "waf..internal", "port": 1},
        "/host",
        'host "waf..internal" is not a hostname or an IP address',
    ),
    (
        "policy-agent",
        with_("policy-agent", policy="../x"),
        "/policy",
        'policy "../x" must be a path of names (letters, digits, "_", "-") joined by "/", '
        'e.g. "example1" or "a/b"',
    ),
    (
        "policy-agent",
        with_("policy-agent", policy="a//b"),
        "/policy",
        'policy "a//b" must be a path of names (letters, digits, "_", "-") joined by "/", '
        'e.g. "example1" or "a/b"',
    ),
    (
        "openid-connect",
        {"client_id": "portal", "discovery": DISCOVERY},
        "/client_secret",
        'property "client_secret" is required unless bearer_only is true',
    ),
    (
        "openid-connect",
        with_("openid-connect", scope="profile email"),
        "/scope",
        'scope must include "openid"',
    ),
    (
        "openid-connect",
        with_("openid-connect", token_signing_alg_values_expected=["RS256", "none"]),
        "/token_signing_alg_values_expected",
        'token_signing_alg_values_expected: "none" is refused (unsigned tokens)',
    ),
    (
        "openid-connect",
        with_("openid-connect", token_signing_alg_values_expected=["NONE"]),
        "/token_signing_alg_values_expected",
        'token_signing_alg_values_expected: "none" is refused (unsigned tokens)',
    ),
    (
        "openid-connect",
        with_("openid-connect", token_signing_alg_values_expected=["HS256"]),
        "/token_signing_alg_values_expected",
        'token_signing_alg_values_expected: unsupported algorithm "HS256" (one of ES256, ES384, '
        "ES512, EdDSA, PS256, PS384, PS512, RS256, RS384, RS512)",
    ),
    ("limit-req", {"rate": 1, "burst": 0, "key": "$remote_addr"}, "/key", VAR_KEY),
    ("limit-req", {"rate": 1, "burst": 0, "key": "remote addr"}, "/key", VAR_KEY),
    (
        "limit-req",
        {"rate": 1, "burst": 0, "key_type": "var_combination", "key": "remote_addr"},
        "/key",
        COMBINED_KEY,
    ),
    ("limit-count", with_("limit-count", key="$http_x_user"), "/key", VAR_KEY),
    ("limit-count", with_("limit-count", key_type="var_combination"), "/key", COMBINED_KEY),
    ("limit-count", with_("limit-count", policy="redis"), "/redis_url", REDIS_NEEDED),
]
SEMANTIC += [
    ("limit-count", with_("limit-count", policy="redis", redis_url=url), "/redis_url", REDIS_URL)
    for url in ("http://cache:6379", "redis://", "redis://cache/zero", "redis://cache:0", "rediss")
]
SEMANTIC += [
    (
        "ldap-auth",
        with_("ldap-auth", ldap_uri=uri),
        "/ldap_uri",
        f'ldap_uri "{uri}" must be ldap://host[:port] or ldaps://host[:port]',
    )
    for uri in (
        "localhost:389",
        "http://ldap.example.org",
        "ldap://",
        "ldap://admin:pw@ldap.example.org",
        "ldap://ldap.example.org/dc=example",
        "ldap://ldap.example.org:0",
        "ldap://ldap.example.org:70000",
        "ldap://ldap.example.org?x",
    )
]
SEMANTIC += [
    (
        "ldap-auth",
        with_("ldap-auth", base_dn=dn),
        "/base_dn",
        f'base_dn "{dn}" is not a distinguished name, e.g. ou=users,dc=example,dc=org',
    )
    for dn in ("users", "ou=", "=users", "ou=users,,dc=org", "ou=users,dc=org,", "o u=users")
]


@pytest.mark.parametrize(("name", "raw", "pointer", "reason"), SEMANTIC)
def test_semantic_check_message(name: str, raw: dict[str, Any], pointer: str, reason: str) -> None:
    error = refusal(name, raw)
    assert (error.reason, error.pointer) == (reason, pointer)


def test_invalid_block_rule_says_why() -> None:
    error = refusal("uri-blocker", {"block_rules": ["^/ok", "[a-"]})
    assert error.pointer == "/block_rules/1"
    assert error.reason.startswith("invalid regular expression: ")


ACCEPTED: list[tuple[str, dict[str, Any]]] = [
    ("ip-restriction", {"blacklist": ["fe80::/10", "203.0.113.7/32"]}),
    ("consumer-restriction", {"blacklist": ["mallory"], "rejected_msg": "go away"}),
    ("uri-blocker", {"block_rules": ["(?i)secret", r"\.\./"], "case_insensitive": True}),
    ("cors", {"allow_origins": "https://a.example.com", "allow_credential": True}),
    ("cors", {"allow_origins": "http://[::1]:8080, https://b.example.com:8443"}),
    ("cors", {"allow_methods": "GET, POST", "expose_headers": "X-Request-Id, ETag"}),
    ("cors", {"max_age": -1, "expose_headers": "*"}),
    ("waf", {"host": "::1", "port": 65_535, "fail_open": True}),
    ("waf", {"host": "waf", "port": 1, "timeout": 60_000}),
    ("waf", {"host": "waf.internal.", "port": 1}),
    ("policy-agent", {"host": "https://opa.example.com:8443", "policy": "http_api/authz"}),
    ("openid-connect", {**SEED["openid-connect"], "scope": "openid profile email"}),
    (
        "openid-connect",
        {
            **MINIMAL["openid-connect"][0],
            "audience": "api://gateway",
            "token_signing_alg_values_expected": ["PS256", "EdDSA"],
            "redirect_uri": "https://portal.example.com/callback",
            "logout_path": "/auth/logout",
        },
    ),
    ("ldap-auth", {"ldap_uri": "ldap://[::1]:389", "base_dn": r"ou=a\,b,dc=example,dc=org"}),
    ("ldap-auth", {"ldap_uri": "ldaps://ldap:636/", "base_dn": "cn=a+sn=b,2.5.4.10=org"}),
    ("ldap-auth", {**SEED["ldap-auth"], "uid": "uid", "use_tls": True, "tls_verify": True}),
    ("limit-req", {"rate": 1, "burst": 0, "key_type": "var", "key": "http_x_api_key"}),
    (
        "limit-req",
        {
            "rate": 1,
            "burst": 0,
            "key_type": "var_combination",
            "key": "$remote_addr $consumer_name",
        },
    ),
    ("limit-req", {"rate": 1, "burst": 0, "key_type": "constant", "key": "everyone"}),
    ("limit-count", with_("limit-count", policy="redis", redis_url="redis://:pw@cache:6379/0")),
    ("limit-count", with_("limit-count", policy="redis", redis_url="rediss://cache")),
    ("limit-count", with_("limit-count", redis_url="redis://cache")),  # kept, unused locally
    ("product-quota", {"error_policy": "fail_open"}),
]


@pytest.mark.parametrize(("name", "raw"), ACCEPTED)
def test_valid_variants_accepted(name: str, raw: dict[str, Any]) -> None:
    check_plugin(name, raw)


# --- published schema ------------------------------------------------------------------------


@pytest.mark.parametrize("name", TABLE)
def test_schema_describes_every_property_and_lists_required(name: str) -> None:
    schema = PLUGINS[name].json_schema()
    properties = schema["properties"]
    assert properties
    for prop, definition in properties.items():
        assert definition.get("description"), f"{name}.{prop} has no description"
    assert set(schema.get("required", [])) == REQUIRED[name]
    assert ("_meta" in properties) is TABLE[name][2]
    assert schema["additionalProperties"] is False


@pytest.mark.parametrize("name", ["ip-restriction", "consumer-restriction"])
def test_schema_says_one_of_the_lists(name: str) -> None:
    assert PLUGINS[name].json_schema()["oneOf"] == [
        {"required": ["whitelist"]},
        {"required": ["blacklist"]},
    ]


@pytest.mark.parametrize("name", TABLE)
def test_secret_fields(name: str) -> None:
    secrets = PLUGINS[name].config.secret_fields
    assert secrets == SECRETS.get(name, frozenset())
    assert secrets <= set(PLUGINS[name].config.model_fields)


# --- consumer credentials --------------------------------------------------------------------


@pytest.mark.parametrize("name", TABLE)
def test_only_credential_plugins_have_a_consumer_model(name: str) -> None:
    assert (PLUGINS[name].consumer is not None) is (name in CREDENTIALS)


@pytest.mark.parametrize(("name", "expected"), CREDENTIALS.items())
def test_credential_schema(name: str, expected: tuple[set[str], frozenset[str]]) -> None:
    required, secrets = expected
    model = PLUGINS[name].consumer
    assert model is not None and issubclass(model, ConsumerCredential)
    schema = PLUGINS[name].consumer_schema()
    assert schema is not None
    assert set(schema["required"]) == required
    assert all(p.get("description") for p in schema["properties"].values())
    assert model.secret_fields == secrets


@pytest.mark.parametrize(
    ("raw", "loc", "reason"),
    [
        ({"password": "pw"}, ("username",), 'property "username" is required'),
        ({"username": "u"}, ("password",), 'property "password" is required'),
        ({"username": "", "password": "pw"}, ("username",), None),
        ({"username": "u" * 257, "password": "pw"}, ("username",), None),
        ({"username": "u", "password": "p" * 1025}, ("password",), None),
        (
            {"username": "a:b", "password": "pw"},
            ("username",),
            "username must not contain a colon or control characters",
        ),
        (
            {"username": "a\nb", "password": "pw"},
            ("username",),
            "username must not contain a colon or control characters",
        ),
    ],
)
def test_basic_auth_credential(
    raw: dict[str, Any], loc: tuple[str, ...], reason: str | None
) -> None:
    got_reason, got_loc = credential_refusal("basic-auth", raw)
    assert got_loc == loc
    if reason is not None:
        assert got_reason == reason


def test_basic_auth_credential_accepted() -> None:
    model = PLUGINS["basic-auth"].consumer
    assert model is not None
    model.model_validate({"username": "alice@example.com", "password": "correct horse"})


def _pem(key: Any) -> str:
    return str(
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


@pytest.fixture(scope="module")
def keys() -> dict[str, str]:
    return {
        "rsa2048": _pem(rsa.generate_private_key(public_exponent=65537, key_size=2048)),
        # a weak key on purpose: the check must refuse it
        "rsa1024": _pem(rsa.generate_private_key(public_exponent=65537, key_size=1024)),  # noqa: S505
        "p256": _pem(ec.generate_private_key(ec.SECP256R1())),
        "p384": _pem(ec.generate_private_key(ec.SECP384R1())),
        "ed25519": _pem(ed25519.Ed25519PrivateKey.generate()),
    }


B64_48 = base64.b64encode(b"k" * 48).decode()
B64_64 = base64.b64encode(b"k" * 64).decode()


@pytest.mark.parametrize(
    "raw",
    [
        {"key": "user-key", "secret": "s" * 32},
        {"key": "user-key", "secret": "s" * 48, "algorithm": "HS384", "exp": 60},
        {"key": "user-key", "secret": B64_64, "algorithm": "HS512", "base64_secret": True},
        {"key": "user-key", "public_key": "rsa2048", "algorithm": "RS256"},
        {"key": "user-key", "public_key": "rsa2048", "algorithm": "RS512"},
        {"key": "user-key", "public_key": "p256", "algorithm": "ES256"},
        {"key": "user-key", "public_key": "p384", "algorithm": "ES384"},
        {"key": "user-key", "public_key": "ed25519", "algorithm": "EdDSA"},
    ],
)
def test_jwt_credential_accepted(raw: dict[str, Any], keys: dict[str, str]) -> None:
    if "public_key" in raw:
        raw = {**raw, "public_key": keys[raw["public_key"]]}
    model = PLUGINS["jwt-auth"].consumer
    assert model is not None
    credential = model.model_validate(raw)
    assert credential.model_dump()["exp"] == raw.get("exp", 86_400)


@pytest.mark.parametrize(
    ("raw", "loc", "reason"),
    [
        ({"secret": "s" * 32}, ("key",), 'property "key" is required'),
        ({"key": "", "secret": "s" * 32}, ("key",), "$.key: must be at least 1 characters long"),
        ({"key": "k"}, ("secret",), 'property "secret" is required for HS256'),
        (
            {"key": "k", "secret": "short"},
            ("secret",),
            "secret must be at least 32 bytes for HS256 (RFC 7518 §3.2)",
        ),
        (
            {"key": "k", "secret": "s" * 47, "algorithm": "HS384"},
            ("secret",),
            "secret must be at least 48 bytes for HS384 (RFC 7518 §3.2)",
        ),
        (
            {"key": "k", "secret": B64_48, "algorithm": "HS512", "base64_secret": True},
            ("secret",),
            "secret must be at least 64 bytes for HS512 (RFC 7518 §3.2)",
        ),
        (
            {"key": "k", "secret": "not base64!" * 8, "base64_secret": True},
            ("secret",),
            "secret is not valid base64 (base64_secret is true)",
        ),
        (
            {"key": "k", "algorithm": "RS256"},
            ("public_key",),
            'property "public_key" is required for RS256',
        ),
        (
            {"key": "k", "algorithm": "ES256", "public_key": "-----BEGIN PUBLIC KEY-----\nxx"},
            ("public_key",),
            "public_key is not a PEM public key",
        ),
        (
            {"key": "k", "algorithm": "RS256", "public_key": "p256"},
            ("public_key",),
            "public_key must be an RSA key of at least 2048 bits for RS256",
        ),
        (
            {"key": "k", "algorithm": "RS384", "public_key": "rsa1024"},
            ("public_key",),
            "public_key must be an RSA key of at least 2048 bits for RS384",
        ),
        (
            {"key": "k", "algorithm": "ES256", "public_key": "p384"},
            ("public_key",),
            "public_key must be an EC key on curve secp256r1 for ES256",
        ),
        (
            {"key": "k", "algorithm": "ES384", "public_key": "rsa2048"},
            ("public_key",),
            "public_key must be an EC key on curve secp384r1 for ES384",
        ),
        (
            {"key": "k", "algorithm": "EdDSA", "public_key": "p256"},
            ("public_key",),
            "public_key must be an Ed25519 or Ed448 key for EdDSA",
        ),
        (
            {"key": "k", "secret": "s" * 32, "algorithm": "HS1"},
            ("algorithm",),
            None,
        ),
        ({"key": "k", "secret": "s" * 32, "exp": 0}, ("exp",), None),
        ({"key": "k", "secret": "s" * 32, "base64_secret": "yes"}, ("base64_secret",), None),
    ],
)
def test_jwt_credential_refused(
    raw: dict[str, Any], loc: tuple[str, ...], reason: str | None, keys: dict[str, str]
) -> None:
    if raw.get("public_key") in keys:
        raw = {**raw, "public_key": keys[raw["public_key"]]}
    got_reason, got_loc = credential_refusal("jwt-auth", raw)
    assert got_loc == loc
    if reason is not None:
        assert got_reason == reason


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ({}, 'property "user_dn" is required'),
        (
            {"user_dn": "user01"},
            'user_dn "user01" is not a distinguished name, e.g. ou=users,dc=example,dc=org',
        ),
    ],
)
def test_ldap_credential_refused(raw: dict[str, Any], reason: str) -> None:
    got_reason, got_loc = credential_refusal("ldap-auth", raw)
    assert (got_reason, got_loc) == (reason, ("user_dn",))


def test_ldap_credential_accepted() -> None:
    model = PLUGINS["ldap-auth"].consumer
    assert model is not None
    model.model_validate({"user_dn": "cn=user01,ou=users,dc=example,dc=org"})
