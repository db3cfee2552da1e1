"""UpstreamSpecification: defaults, bounds, strict types, cross-field rules, error pointers."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from portico.core.validation import translate
from portico.management.upstream.healthcheck import HealthChecks
from portico.management.upstream.specification import UpstreamSpecification

MINIMAL: dict[str, Any] = {"nodes": [{"host": "127.0.0.1", "port": 8080}]}

ACTIVE_DEFAULTS: dict[str, Any] = {
    "type": "http",
    "http_path": "/",
    "host": None,
    "port": None,
    "timeout": 1,
    "concurrency": 10,
    "healthy": {"interval": 1, "successes": 2, "http_statuses": [200, 302]},
    "unhealthy": {
        "interval": 1,
        "http_failures": 5,
        "tcp_failures": 2,
        "timeouts": 3,
        "http_statuses": [429, 404, 500, 501, 502, 503, 504, 505],
    },
}
# APISIX's passive default: 2xx up to 208, 226, and 300-308 (written out on purpose)
PASSIVE_HEALTHY_STATUSES: tuple[int, ...] = (200, 201, 202, 203, 204, 205, 206, 207, 208, 226)
PASSIVE_HEALTHY_STATUSES += (300, 301, 302, 303, 304, 305, 306, 307, 308)
PASSIVE_DEFAULTS: dict[str, Any] = {
    "type": "http",
    "healthy": {
        "successes": 5,
        "http_statuses": [*PASSIVE_HEALTHY_STATUSES],
    },
    "unhealthy": {
        "http_failures": 5,
        "tcp_failures": 2,
        "timeouts": 7,
        "http_statuses": [429, 500, 503],
    },
}

FULL: dict[str, Any] = {
    "scheme": "https",
    "nodes": [
        {"host": "backend-1.internal", "port": 8443, "weight": 10, "priority": 1},
        {"host": "10.0.0.2", "port": 8443, "weight": 0, "priority": -1},
        {"host": "2001:db8::1", "port": 443, "weight": 65535, "priority": 0},
    ],
    "discovery": None,
    "type": "chash",
    "hashOn": "header",
    "key": "X-User-Id",
    "timeout": {"connect": 2.5, "send": 10.0, "read": 30.0},
    "retries": 2,
    "retryTimeout": 5.0,
    "passHost": "rewrite",
    "upstreamHost": "api.example.com:8443",
    "keepalivePool": {"size": 64, "idle_timeout": 30.0, "requests": 500},
    "checks": {
        "active": {
            "type": "https",
            "http_path": "/healthz?full=1",
            "host": "api.example.com",
            "port": 9000,
            "timeout": 3,
            "concurrency": 4,
            "healthy": {"interval": 5, "successes": 3, "http_statuses": [200]},
            "unhealthy": {
                "interval": 2,
                "http_failures": 3,
                "tcp_failures": 1,
                "timeouts": 2,
                "http_statuses": [500, 502, 503],
            },
        },
        "passive": {
            "type": "http",
            "healthy": {"successes": 0, "http_statuses": [200, 204]},
            "unhealthy": {
                "http_failures": 3,
                "tcp_failures": 0,
                "timeouts": 4,
                "http_statuses": [502, 503, 504],
            },
        },
    },
}


def errors_of(document: Any) -> list[dict[str, str]]:
    with pytest.raises(ValidationError) as caught:
        UpstreamSpecification.model_validate(document)
    return translate(caught.value.errors())


def with_value(path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    """FULL with ``value`` at ``path``."""
    document = copy.deepcopy(FULL)
    target: Any = document
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return document


def json_path(path: tuple[str | int, ...]) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def pointer(path: tuple[str | int, ...]) -> str:
    return "".join(f"/{p}" for p in path)


# --- defaults -----------------------------------------------------------------------------


def test_minimal_specification_dumps_every_default() -> None:
    stored = UpstreamSpecification.model_validate(MINIMAL).model_dump(
        mode="json", exclude_none=False
    )
    assert stored == {
        "scheme": "http",
        "nodes": [{"host": "127.0.0.1", "port": 8080, "weight": 1, "priority": 0}],
        "discovery": None,
        "type": "roundrobin",
        "hashOn": "vars",
        "key": None,
        "timeout": {"connect": 60.0, "send": 60.0, "read": 60.0},
        "retries": None,
        "retryTimeout": 0.0,
        "passHost": "pass",
        "upstreamHost": None,
        "keepalivePool": {"size": 320, "idle_timeout": 60.0, "requests": 1000},
        "checks": None,
    }


def test_empty_active_and_passive_get_apisix_defaults() -> None:
    document = {**MINIMAL, "checks": {"active": {}, "passive": {}}}
    checks = UpstreamSpecification.model_validate(document).model_dump(mode="json")["checks"]
    assert checks == {"active": ACTIVE_DEFAULTS, "passive": PASSIVE_DEFAULTS}


def test_partial_nested_objects_are_completed() -> None:
    document = {
        **MINIMAL,
        "timeout": {"read": 5},
        "keepalivePool": {"size": 8},
        "checks": {"active": {"healthy": {"successes": 4}}},
    }
    stored = UpstreamSpecification.model_validate(document).model_dump(mode="json")
    assert stored["timeout"] == {"connect": 60.0, "send": 60.0, "read": 5.0}
    assert stored["keepalivePool"] == {"size": 8, "idle_timeout": 60.0, "requests": 1000}
    assert stored["checks"]["active"]["healthy"] == {
        "interval": 1,
        "successes": 4,
        "http_statuses": [200, 302],
    }
    assert stored["checks"]["active"]["unhealthy"] == ACTIVE_DEFAULTS["unhealthy"]
    assert stored["checks"]["passive"] is None


def test_defaults_are_not_shared_between_instances() -> None:
    first = UpstreamSpecification.model_validate({**MINIMAL, "checks": {"active": {}}})
    second = UpstreamSpecification.model_validate({**MINIMAL, "checks": {"active": {}}})
    assert first.checks is not None
    assert first.checks.active is not None
    first.checks.active.healthy.http_statuses.append(418)
    first.timeout.connect = 1.0
    assert second.model_dump(mode="json")["checks"]["active"] == ACTIVE_DEFAULTS
    assert second.timeout.connect == 60.0


def test_full_example_round_trips() -> None:
    model = UpstreamSpecification.model_validate(FULL)
    stored = model.model_dump(mode="json", exclude_none=False)
    assert stored == FULL
    assert UpstreamSpecification.model_validate(stored) == model
    assert UpstreamSpecification.model_validate_json(json.dumps(stored)) == model


def test_stored_minimal_specification_validates_again() -> None:
    stored = UpstreamSpecification.model_validate(MINIMAL).model_dump(mode="json")
    again = UpstreamSpecification.model_validate_json(json.dumps(stored))
    assert again.model_dump(mode="json") == stored


def test_every_field_is_described_in_the_json_schema() -> None:
    schema = UpstreamSpecification.model_json_schema()
    objects = [schema, *schema["$defs"].values()]
    assert {d["title"] for d in schema["$defs"].values()} >= {"HealthChecks", "UpstreamNode"}
    for obj in objects:
        assert obj.get("additionalProperties") is False, obj["title"]
        for name, prop in obj["properties"].items():
            assert prop.get("description"), f"{obj['title']}.{name}"


# --- bounds: just inside passes, just outside fails at the field ----------------------------

A = ("checks", "active")
P = ("checks", "passive")
GE = "must be greater than or equal to"
LE = "must be less than or equal to"

BOUNDS: list[tuple[tuple[str | int, ...], Any, Any, str]] = [
    (("nodes", 0, "port"), 1, 0, f"{GE} 1"),
    (("nodes", 0, "port"), 65535, 65536, f"{LE} 65535"),
    (("nodes", 0, "weight"), 0, -1, f"{GE} 0"),
    (("nodes", 0, "weight"), 65535, 65536, f"{LE} 65535"),
    (("nodes", 0, "priority"), -65535, -65536, f"{GE} -65535"),
    (("nodes", 0, "priority"), 65535, 65536, f"{LE} 65535"),
    (("key",), "k", "", "must be at least 1 characters long"),
    (("key",), "k" * 256, "k" * 257, "must be at most 256 characters long"),
    (("timeout", "connect"), 0.001, 0, "must be greater than 0"),
    (("timeout", "send"), 3600, 3600.5, f"{LE} 3600"),
    (("timeout", "read"), 3600.0, 3601, f"{LE} 3600"),
    (("retries",), 0, -1, f"{GE} 0"),
    (("retries",), 100, 101, f"{LE} 100"),
    (("retryTimeout",), 0, -0.5, f"{GE} 0"),
    (("keepalivePool", "size"), 1, 0, f"{GE} 1"),
    (("keepalivePool", "size"), 10000, 10001, f"{LE} 10000"),
    (("keepalivePool", "idle_timeout"), 0, -1, f"{GE} 0"),
    (("keepalivePool", "requests"), 1, 0, f"{GE} 1"),
    (("keepalivePool", "requests"), 1_000_000, 1_000_001, f"{LE} 1000000"),
    ((*A, "port"), 1, 0, f"{GE} 1"),
    ((*A, "port"), 65535, 65536, f"{LE} 65535"),
    ((*A, "timeout"), 1, 0, f"{GE} 1"),
    ((*A, "timeout"), 300, 301, f"{LE} 300"),
    ((*A, "concurrency"), 1, 0, f"{GE} 1"),
    ((*A, "concurrency"), 1000, 1001, f"{LE} 1000"),
    ((*A, "http_path"), "/" + "a" * 2047, "/" + "a" * 2048, "must be at most 2048"),
    ((*A, "host"), ".".join(["a" * 63] * 4)[:253], ".".join(["a" * 63] * 4), "at most 253"),
    ((*A, "healthy", "interval"), 1, 0, f"{GE} 1"),
    ((*A, "healthy", "interval"), 86400, 86401, f"{LE} 86400"),
    ((*A, "healthy", "successes"), 1, 0, f"{GE} 1"),
    ((*A, "healthy", "successes"), 254, 255, f"{LE} 254"),
    ((*A, "unhealthy", "interval"), 1, 0, f"{GE} 1"),
    ((*A, "unhealthy", "interval"), 86400, 86401, f"{LE} 86400"),
    ((*A, "unhealthy", "http_failures"), 1, 0, f"{GE} 1"),
    ((*A, "unhealthy", "http_failures"), 254, 255, f"{LE} 254"),
    ((*A, "unhealthy", "tcp_failures"), 1, 0, f"{GE} 1"),
    ((*A, "unhealthy", "tcp_failures"), 254, 255, f"{LE} 254"),
    ((*A, "unhealthy", "timeouts"), 1, 0, f"{GE} 1"),
    ((*A, "unhealthy", "timeouts"), 254, 255, f"{LE} 254"),
    ((*P, "healthy", "successes"), 0, -1, f"{GE} 0"),
    ((*P, "healthy", "successes"), 254, 255, f"{LE} 254"),
    ((*P, "unhealthy", "http_failures"), 0, -1, f"{GE} 0"),
    ((*P, "unhealthy", "http_failures"), 254, 255, f"{LE} 254"),
    ((*P, "unhealthy", "tcp_failures"), 0, -1, f"{GE} 0"),
    ((*P, "unhealthy", "tcp_failures"), 254, 255, f"{LE} 254"),
    ((*P, "unhealthy", "timeouts"), 0, -1, f"{GE} 0"),
    ((*P, "unhealthy", "timeouts"), 254, 255, f"{LE} 254"),
]

STATUS_LISTS = [
    (*A, "healthy", "http_statuses"),
    (*A, "unhealthy", "http_statuses"),
    (*P, "healthy", "http_statuses"),
    (*P, "unhealthy", "http_statuses"),
]
for _list in STATUS_LISTS:
    BOUNDS += [
        ((*_list, 0), 200, 199, f"{GE} 200"),
        ((*_list, 0), 599, 600, f"{LE} 599"),
    ]


@pytest.mark.parametrize(("path", "inside", "outside", "message"), BOUNDS)
def test_bound(path: tuple[str | int, ...], inside: Any, outside: Any, message: str) -> None:
    UpstreamSpecification.model_validate(with_value(path, inside))
    problems = errors_of(with_value(path, outside))
    assert [p["pointer"] for p in problems] == [pointer(path)]
    assert problems[0]["detail"].startswith(f"{json_path(path)}: ")
    assert message in problems[0]["detail"]


def test_bound_detail_reads_like_the_json_schema_validator() -> None:
    problems = errors_of(with_value((*A, "healthy", "successes"), 0))
    assert problems == [
        {
            "pointer": "/checks/active/healthy/successes",
            "detail": "$.checks.active.healthy.successes: must be greater than or equal to 1",
        }
    ]


@pytest.mark.parametrize("path", STATUS_LISTS)
def test_status_list_sizes_and_uniqueness(path: tuple[str, ...]) -> None:
    UpstreamSpecification.model_validate(with_value(path, [200]))
    UpstreamSpecification.model_validate(with_value(path, list(range(200, 264))))
    assert errors_of(with_value(path, [])) == [
        {"pointer": pointer(path), "detail": f"{json_path(path)}: must have at least 1 items"}
    ]
    assert errors_of(with_value(path, list(range(200, 265)))) == [
        {"pointer": pointer(path), "detail": f"{json_path(path)}: must have at most 64 items"}
    ]
    assert errors_of(with_value(path, [500, 502, 500])) == [
        {"pointer": pointer(path), "detail": f"{json_path(path)}: must have only unique items"}
    ]


def test_node_count_bounds() -> None:
    many = [{"host": f"n{i}", "port": 80} for i in range(1000)]
    assert len(UpstreamSpecification.model_validate({"nodes": many}).nodes or []) == 1000
    assert errors_of({"nodes": [*many, {"host": "one-more", "port": 80}]}) == [
        {"pointer": "/nodes", "detail": "$.nodes: must have at most 1000 items"}
    ]
    assert errors_of({"nodes": []}) == [
        {"pointer": "/nodes", "detail": "$.nodes: must have at least 1 items"}
    ]


@pytest.mark.parametrize("path", ["health", "", "/a b", "/tab\there", "/nul\x00", "/\x7f"])
def test_http_path_must_be_an_absolute_path_without_blanks(path: str) -> None:
    problems = errors_of(with_value((*A, "http_path"), path))
    assert [p["pointer"] for p in problems] == ["/checks/active/http_path"]


@pytest.mark.parametrize("field", ["connect", "send", "read"])
@pytest.mark.parametrize("value", [float("inf"), float("nan")])
def test_timeouts_must_be_finite(field: str, value: float) -> None:
    problems = errors_of(with_value(("timeout", field), value))
    assert [p["pointer"] for p in problems] == [f"/timeout/{field}"]


@pytest.mark.parametrize("path", [("retryTimeout",), ("keepalivePool", "idle_timeout")])
def test_open_ended_numbers_must_be_finite(path: tuple[str, ...]) -> None:
    assert [p["pointer"] for p in errors_of(with_value(path, float("inf")))] == [pointer(path)]


# --- strict JSON types ----------------------------------------------------------------------

STRICT_CASES: list[tuple[tuple[str | int, ...], Any, str]] = [
    (("nodes", 0, "port"), "8080", "integer expected"),
    (("nodes", 0, "port"), 8080.0, "integer expected"),
    (("nodes", 0, "weight"), True, "integer expected"),
    (("nodes", 0, "weight"), 1.5, "integer expected"),
    (("nodes", 0, "priority"), None, "integer expected"),
    (("retries",), True, "integer expected"),
    (("retries",), "2", "integer expected"),
    (("timeout", "connect"), "5", "number expected"),
    (("timeout", "connect"), False, "number expected"),
    (("retryTimeout",), "0", "number expected"),
    (("keepalivePool", "size"), 1.5, "integer expected"),
    ((*A, "timeout"), 1.5, "integer expected"),
    ((*A, "port"), "9000", "integer expected"),
    ((*A, "healthy", "successes"), True, "integer expected"),
    ((*A, "healthy", "http_statuses", 0), "200", "integer expected"),
    ((*P, "unhealthy", "timeouts"), 2.0, "integer expected"),
    (("nodes", 0, "host"), 10, "string expected"),
    (("key",), 1, "string expected"),
    (("upstreamHost",), ["a"], "string expected"),
    (("scheme",), "HTTP", "must be one of 'http', 'https', 'grpc' or 'grpcs'"),
    (("type",), 1, "must be one of"),
    (("hashOn",), None, "must be one of"),
    (("passHost",), True, "must be one of"),
    ((*A, "type"), "udp", "must be one of 'http', 'https' or 'tcp'"),
    (("nodes",), {"127.0.0.1:80": 1}, "array expected"),
    (("nodes", 0), ["127.0.0.1", 80], "object expected"),
    (("timeout",), 5, "object expected"),
    (("checks",), [], "object expected"),
    ((*A, "healthy"), "yes", "object expected"),
    ((*P, "healthy", "http_statuses"), 200, "array expected"),
]


@pytest.mark.parametrize(("path", "value", "message"), STRICT_CASES)
def test_wrong_json_type_fails_at_the_field(
    path: tuple[str | int, ...], value: Any, message: str
) -> None:
    problems = errors_of(with_value(path, value))
    assert [p["pointer"] for p in problems] == [pointer(path)]
    assert problems[0]["detail"].startswith(f"{json_path(path)}: {message}")


def test_ints_are_accepted_where_numbers_are_expected() -> None:
    model = UpstreamSpecification.model_validate(
        {**MINIMAL, "timeout": {"connect": 1, "send": 2, "read": 3}, "retryTimeout": 4}
    )
    assert model.model_dump(mode="json")["timeout"] == {"connect": 1.0, "send": 2.0, "read": 3.0}


# --- unknown fields -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        ("service_name",),
        ("hash_on",),
        ("nodes", 0, "metadata"),
        ("discoveryArgs",),
        ("timeout", "total"),
        ("keepalivePool", "idleTimeout"),
        ("checks", "threshold"),
        (*A, "req_headers"),
        (*A, "https_verify_certificate"),
        (*A, "healthy", "timeouts"),
        (*P, "healthy", "interval"),
        (*P, "unhealthy", "interval"),
    ],
)
def test_unknown_field_is_refused_at_its_pointer(path: tuple[str | int, ...]) -> None:
    problems = errors_of(with_value(path, 1))
    assert problems == [
        {"pointer": pointer(path), "detail": f"property '{path[-1]}' is not allowed"}
    ]


# --- nodes and discovery --------------------------------------------------------------------


def test_nodes_or_discovery_is_required() -> None:
    assert errors_of({}) == [
        {"pointer": "/nodes", "detail": "$.nodes: either nodes or discovery is required"}
    ]
    assert errors_of({"nodes": None, "discovery": None}) == errors_of({})


def test_nodes_and_discovery_are_mutually_exclusive() -> None:
    document = {**MINIMAL, "discovery": {"type": "dns", "serviceName": "backend.svc:8080"}}
    assert errors_of(document) == [
        {
            "pointer": "/discovery",
            "detail": "$.discovery: nodes and discovery are mutually exclusive",
        }
    ]


def test_discovery_alone_is_accepted() -> None:
    document = {"discovery": {"type": "dns", "serviceName": "backend.default.svc:8080"}}
    stored = UpstreamSpecification.model_validate(document).model_dump(mode="json")
    assert stored["nodes"] is None
    assert stored["discovery"] == {"type": "dns", "serviceName": "backend.default.svc:8080"}


@pytest.mark.parametrize("kind", ["consul", "nacos", "kubernetes", "DNS", ""])
def test_only_dns_discovery(kind: str) -> None:
    problems = errors_of({"discovery": {"type": kind, "serviceName": "backend"}})
    assert problems == [
        {"pointer": "/discovery/type", "detail": "$.discovery.type: must be one of 'dns'"}
    ]


def test_discovery_fields_are_required() -> None:
    assert errors_of({"discovery": {}}) == [
        {"pointer": "/discovery/type", "detail": "required property 'type' not found"},
        {
            "pointer": "/discovery/serviceName",
            "detail": "required property 'serviceName' not found",
        },
    ]


def test_node_host_and_port_are_required() -> None:
    assert errors_of({"nodes": [{}]}) == [
        {"pointer": "/nodes/0/host", "detail": "required property 'host' not found"},
        {"pointer": "/nodes/0/port", "detail": "required property 'port' not found"},
    ]


# --- host names -----------------------------------------------------------------------------

GOOD_HOSTS = [
    ("example.com", "example.com"),
    ("backend-1", "backend-1"),
    ("Backend.Example.COM", "Backend.Example.COM"),
    ("a", "a"),
    ("1password.example", "1password.example"),
    ("xn--bcher-kva.example", "xn--bcher-kva.example"),
    ("10.0.0.1", "10.0.0.1"),
    ("255.255.255.255", "255.255.255.255"),
    ("::1", "::1"),
    ("[::1]", "::1"),
    ("2001:db8::8a2e:370:7334", "2001:db8::8a2e:370:7334"),
    ("[fe80::1]", "fe80::1"),
    ("::ffff:10.0.0.1", "::ffff:10.0.0.1"),
    ("a" * 63 + ".example", "a" * 63 + ".example"),
]
BAD_HOSTS = [
    "http://x",
    "a b",
    "",
    "-bad-",
    "bad-",
    "-bad",
    "a..b",
    ".a",
    "a.",
    "a_b",
    "*.example.com",
    "example.com/path",
    "a" * 64 + ".example",
    "999.1.1.1",
    "10.0.0",
    "10.0.0.01",
    "1.2.3.4.5",
    "[::1",
    "::1]",
    "[example.com]",
    "fe80::1%eth0",
    ":::",
    "host:80",
    "bücher.example",
    " example.com",
    "example.com\n",
]


@pytest.mark.parametrize(("given_host", "stored"), GOOD_HOSTS)
@pytest.mark.parametrize("where", [("nodes", 0, "host"), (*A, "host")])
def test_good_host(given_host: str, stored: str, where: tuple[str | int, ...]) -> None:
    model = UpstreamSpecification.model_validate(with_value(where, given_host))
    target: Any = model.model_dump(mode="json")
    for part in where:
        target = target[part]
    assert target == stored


@pytest.mark.parametrize("bad", BAD_HOSTS)
@pytest.mark.parametrize("where", [("nodes", 0, "host"), (*A, "host")])
def test_bad_host(bad: str, where: tuple[str | int, ...]) -> None:
    problems = errors_of(with_value(where, bad))
    assert [p["pointer"] for p in problems] == [pointer(where)]
    expected = "must be at least 1 characters long" if bad == "" else "hostname or an IP address"
    assert expected in problems[0]["detail"]


GOOD_HOST_PORTS = [
    ("api.example.com", "api.example.com"),
    ("api.example.com:8443", "api.example.com:8443"),
    ("10.0.0.1:53", "10.0.0.1:53"),
    ("[::1]:53", "[::1]:53"),
    ("[::1]", "::1"),
    ("::1", "::1"),
    ("backend:1", "backend:1"),
    ("backend:65535", "backend:65535"),
]
BAD_HOST_PORTS = [
    *(host for host in BAD_HOSTS if host != "host:80"),  # a port is welcome here
    "backend:0",
    "backend:65536",
    "backend:",
    "backend:08",
    "backend:http",
    ":80",
    "[::1]:",
    "[::1]:0",
    "[example.com]:80",
    "a:b:c",
    "backend:80:90",
    ".".join(["a" * 63] * 4),  # 255 characters
    ".".join(["a" * 63] * 4) + ":80",
]


@pytest.mark.parametrize(("given_host", "stored"), GOOD_HOST_PORTS)
def test_good_host_and_port(given_host: str, stored: str) -> None:
    document = {**MINIMAL, "passHost": "rewrite", "upstreamHost": given_host}
    assert UpstreamSpecification.model_validate(document).upstreamHost == stored


GOOD_SERVICE_NAMES = [
    "api.example.com:8443",
    "backend:1",
    "backend:65535",
    "orders.internal.:80",  # fully qualified
    "_http._tcp.orders.internal",  # SRV: the records give the ports
    "_grpc._tcp.orders.svc.cluster.local.",
]
BAD_SERVICE_NAMES = [
    ("orders.internal", "an A/AAAA name needs the port of its nodes ('name:port')"),
    ("10.0.0.1:53", "must be a DNS name, not an IP address (list addresses under nodes"),
    ("[::1]:53", "must be a DNS name, not an IP address"),
    ("_http._tcp.orders.internal:80", "an SRV name takes its ports from its records"),
    ("_http.orders.internal", "must be a DNS name"),  # one service label: no SRV name
    ("orders..internal:80", "must be a DNS name; e.g. 'orders.internal:8080'"),
    ("orders_1.internal:80", "must be a DNS name"),
    ("orders.internal:0", "must end with a port from 1 to 65535 after ':'"),
]


@pytest.mark.parametrize("name", GOOD_SERVICE_NAMES)
def test_dns_service_names_are_names_with_a_port_or_srv_names(name: str) -> None:
    document = {"discovery": {"type": "dns", "serviceName": name}}
    model = UpstreamSpecification.model_validate(document)
    assert model.discovery is not None
    assert model.discovery.serviceName == name


@pytest.mark.parametrize(("name", "detail"), BAD_SERVICE_NAMES)
def test_a_service_name_dns_cannot_resolve_is_refused_at_the_field(name: str, detail: str) -> None:
    [problem] = errors_of({"discovery": {"type": "dns", "serviceName": name}})
    assert problem["pointer"] == "/discovery/serviceName"
    assert problem["detail"].startswith(f"$.discovery.serviceName: {detail}")


@pytest.mark.parametrize("bad", BAD_HOST_PORTS)
def test_bad_host_and_port(bad: str) -> None:
    document = {**MINIMAL, "passHost": "rewrite", "upstreamHost": bad}
    assert [p["pointer"] for p in errors_of(document)] == ["/upstreamHost"]
    document = {"discovery": {"type": "dns", "serviceName": bad}}
    assert [p["pointer"] for p in errors_of(document)] == ["/discovery/serviceName"]


# --- chash key ------------------------------------------------------------------------------


@pytest.mark.parametrize("hash_on", ["vars", "header", "cookie", "vars_combinations"])
def test_chash_requires_a_key(hash_on: str) -> None:
    problems = errors_of({**MINIMAL, "type": "chash", "hashOn": hash_on})
    assert problems == [
        {
            "pointer": "/key",
            "detail": "$.key: must be set when type is 'chash' (unless hashOn is 'consumer')",
        }
    ]
    UpstreamSpecification.model_validate(
        {**MINIMAL, "type": "chash", "hashOn": hash_on, "key": "k"}
    )


def test_chash_on_consumer_needs_no_key() -> None:
    model = UpstreamSpecification.model_validate({**MINIMAL, "type": "chash", "hashOn": "consumer"})
    assert model.key is None


def test_chash_hash_on_defaults_to_vars() -> None:
    model = UpstreamSpecification.model_validate({**MINIMAL, "type": "chash", "key": "remote_addr"})
    assert (model.hashOn, model.key) == ("vars", "remote_addr")


@pytest.mark.parametrize("balancer", ["roundrobin", "least_conn", "ewma"])
def test_key_is_refused_for_other_balancers(balancer: str) -> None:
    problems = errors_of({**MINIMAL, "type": balancer, "key": "remote_addr"})
    assert problems == [
        {"pointer": "/key", "detail": "$.key: is only allowed when type is 'chash'"}
    ]
    UpstreamSpecification.model_validate({**MINIMAL, "type": balancer, "key": None})


# --- passHost / upstreamHost ----------------------------------------------------------------


def test_rewrite_requires_upstream_host() -> None:
    assert errors_of({**MINIMAL, "passHost": "rewrite"}) == [
        {
            "pointer": "/upstreamHost",
            "detail": "$.upstreamHost: must be set when passHost is 'rewrite'",
        }
    ]


@pytest.mark.parametrize("pass_host", ["pass", "node"])
def test_upstream_host_is_refused_unless_rewrite(pass_host: str) -> None:
    problems = errors_of({**MINIMAL, "passHost": pass_host, "upstreamHost": "api.example.com"})
    assert problems == [
        {
            "pointer": "/upstreamHost",
            "detail": "$.upstreamHost: is only allowed when passHost is 'rewrite'",
        }
    ]


def test_upstream_host_defaults_absent() -> None:
    model = UpstreamSpecification.model_validate({**MINIMAL, "passHost": "node"})
    assert model.upstreamHost is None


# --- checks ---------------------------------------------------------------------------------


def test_checks_needs_active_or_passive() -> None:
    expected = [{"pointer": "/checks", "detail": "$.checks: either active or passive is required"}]
    assert errors_of({**MINIMAL, "checks": {}}) == expected
    assert errors_of({**MINIMAL, "checks": {"active": None, "passive": None}}) == expected


def test_checks_standalone_reports_at_its_root() -> None:
    with pytest.raises(ValidationError) as caught:
        HealthChecks.model_validate({})
    assert translate(caught.value.errors()) == [
        {"pointer": "", "detail": "$: either active or passive is required"}
    ]


def test_passive_alone_is_accepted() -> None:
    model = UpstreamSpecification.model_validate({**MINIMAL, "checks": {"passive": {}}})
    assert model.model_dump(mode="json")["checks"] == {"active": None, "passive": PASSIVE_DEFAULTS}


def test_checks_null_means_none() -> None:
    assert UpstreamSpecification.model_validate({**MINIMAL, "checks": None}).checks is None


def test_several_field_errors_are_all_reported() -> None:
    document = with_value((*A, "timeout"), 0)
    document["checks"]["passive"]["healthy"]["successes"] = 255
    document["nodes"][1]["port"] = "x"
    assert sorted(p["pointer"] for p in errors_of(document)) == [
        "/checks/active/timeout",
        "/checks/passive/healthy/successes",
        "/nodes/1/port",
    ]


# --- property: any JSON value either validates or fails as a ValidationError ----------------

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-2, max_value=70000),
    st.floats(),
    st.text(max_size=20),
    st.sampled_from(["http", "https", "grpc", "tcp", "dns", "chash", "consumer", "rewrite"]),
    st.sampled_from(["node", "/", "example.com", "10.0.0.1", "[::1]", "::1", "a:80", "[::1]:80"]),
    st.sampled_from(["-x", "a..b", "", "vars", "header", "cookie", "X-User-Id", "/healthz"]),
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=12,
)


def tree(noisy: bool) -> st.SearchStrategy[Any]:
    """Specifications built from the real field names, each object a random subset of them.

    Quiet trees hold only values each field accepts, so that only the cross-field rules can
    refuse them and the success path gets exercised; noisy trees mix in out-of-range values,
    stray keys and arbitrary JSON at every level.
    """

    def leaf(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(good, good, good, bad, JSON_VALUES) if noisy else good

    def obj(
        fields: dict[str, st.SearchStrategy[Any]],
        required: dict[str, st.SearchStrategy[Any]] | None = None,
    ) -> st.SearchStrategy[Any]:
        objects = st.fixed_dictionaries(required or {}, optional=fields)
        if not noisy:
            return objects
        stray = st.dictionaries(st.sampled_from(["extra", "id", "name"]), JSON_VALUES, max_size=1)
        with_stray = st.builds(lambda found, more: {**found, **more}, objects, stray)
        return st.one_of(objects, objects, objects, with_stray, JSON_VALUES)

    def ints(low: int, high: int) -> st.SearchStrategy[Any]:
        return leaf(st.integers(low, high), st.sampled_from([low - 1, high + 1, 1.5, True, "1"]))

    hosts = leaf(
        st.sampled_from(["example.com", "backend-1", "10.0.0.1", "::1", "[::1]", "x.y.z"]),
        st.sampled_from(["a..b", "-x", "http://x", "", "a b", "999.1.1.1", "[::1"]),
    )
    host_ports = st.one_of(
        hosts, leaf(st.sampled_from(["api.example.com:8443", "[::1]:53"]), st.just("x:0"))
    )
    statuses = leaf(
        st.lists(st.integers(200, 599), min_size=1, max_size=5, unique=True),
        st.lists(st.integers(150, 650), max_size=5),
    )
    seconds = leaf(
        st.floats(0.001, 3600) | st.integers(1, 3600),
        st.sampled_from([0, -1, 3601, float("inf"), float("nan"), "5"]),
    )
    probe = leaf(st.sampled_from(["http", "https", "tcp"]), st.just("udp"))
    active_count, passive_count, interval = ints(1, 254), ints(0, 254), ints(1, 86400)
    active = obj(
        {
            "type": probe,
            "http_path": leaf(st.sampled_from(["/", "/healthz?x=1"]), st.sampled_from(["x", "/ "])),
            "host": hosts,
            "port": ints(1, 65535),
            "timeout": ints(1, 300),
            "concurrency": ints(1, 1000),
            "healthy": obj(
                {"interval": interval, "successes": active_count, "http_statuses": statuses}
            ),
            "unhealthy": obj(
                {
                    "interval": interval,
                    "http_failures": active_count,
                    "tcp_failures": active_count,
                    "timeouts": active_count,
                    "http_statuses": statuses,
                }
            ),
        }
    )
    passive = obj(
        {
            "type": probe,
            "healthy": obj({"successes": passive_count, "http_statuses": statuses}),
            "unhealthy": obj(
                {
                    "http_failures": passive_count,
                    "tcp_failures": passive_count,
                    "timeouts": passive_count,
                    "http_statuses": statuses,
                }
            ),
        }
    )
    node = obj(
        {"weight": ints(0, 65535), "priority": ints(-65535, 65535)},
        required={"host": hosts, "port": ints(1, 65535)},
    )
    nodes = leaf(st.lists(node, min_size=1, max_size=3), st.just([]))
    discovery = obj(
        {}, required={"type": leaf(st.just("dns"), st.just("consul")), "serviceName": host_ports}
    )
    common = {
        "scheme": leaf(st.sampled_from(["http", "https", "grpc", "grpcs"]), st.just("ws")),
        "type": leaf(st.sampled_from(["roundrobin", "chash", "least_conn", "ewma"]), st.just("x")),
        "hashOn": leaf(
            st.sampled_from(["vars", "header", "cookie", "consumer", "vars_combinations"]),
            st.just("ip"),
        ),
        "key": leaf(st.sampled_from(["remote_addr", "X-User-Id"]), st.just("")),
        "timeout": obj({"connect": seconds, "send": seconds, "read": seconds}),
        "retries": leaf(st.none() | st.integers(0, 100), st.sampled_from([-1, 101, True])),
        "retryTimeout": seconds,
        "passHost": leaf(st.sampled_from(["pass", "node", "rewrite"]), st.just("keep")),
        "upstreamHost": host_ports,
        "keepalivePool": obj(
            {"size": ints(1, 10000), "idle_timeout": seconds, "requests": ints(1, 1_000_000)}
        ),
        "checks": obj({"active": active, "passive": passive}),
    }
    return st.one_of(
        obj(common, required={"nodes": nodes}),
        obj(common, required={"discovery": discovery}),
        obj({**common, "nodes": nodes, "discovery": discovery}),
    )


SPECIFICATIONS = st.one_of(tree(noisy=False), tree(noisy=True))


def outcome(validate: Any, document: Any) -> UpstreamSpecification | list[dict[str, str]]:
    try:
        return validate(document)  # type: ignore[no-any-return]
    except ValidationError as exc:
        problems = translate(exc.errors())
        assert problems
        for problem in problems:
            assert problem["pointer"] == "" or problem["pointer"].startswith("/")
            assert isinstance(problem["detail"], str)
            assert problem["detail"]
        return problems


@settings(max_examples=300, deadline=None)
@given(st.one_of(SPECIFICATIONS, JSON_VALUES))
def test_any_json_value_validates_or_fails_cleanly(document: Any) -> None:
    result = outcome(UpstreamSpecification.model_validate, document)
    if isinstance(result, UpstreamSpecification):
        stored = result.model_dump(mode="json", exclude_none=False)
        assert UpstreamSpecification.model_validate(stored) == result
        assert UpstreamSpecification.model_validate_json(json.dumps(stored)) == result
    try:
        text = json.dumps(document, allow_nan=False)
    except ValueError:
        return
    from_json = outcome(UpstreamSpecification.model_validate_json, text)
    assert isinstance(from_json, UpstreamSpecification) == isinstance(result, UpstreamSpecification)
