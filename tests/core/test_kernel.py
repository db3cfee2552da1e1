"""Kernel units: settings, list-query parsing, redaction, client address, token keys."""

from __future__ import annotations

import json
import logging
import re
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import SecretStr

from portico.core.clock import Clock
from portico.core.errors import TokenExpired, Unauthorized, ValidationFailed
from portico.core.logging import REDACTED, JsonFormatter, RedactingFilter, redact
from portico.core.middleware import client_address, parse_networks
from portico.core.pagination import ListSpec, SortKey
from portico.core.settings import Settings
from portico.core.tokens import AccessTokenService

KEY_A = "a" * 48
KEY_B = "b" * 48


def make_settings(tmp_path: Path, **values: object) -> Settings:
    return Settings(data_dir=tmp_path, _env_file=None, **values)  # type: ignore[call-arg, arg-type]


@pytest.mark.parametrize("secret", ["change-me", "secret", "short-but-not-listed"])
def test_placeholder_secrets_are_refused_outside_development(tmp_path: Path, secret: str) -> None:
    with pytest.raises(ValueError, match="PORTICO_SECRET_KEY"):
        make_settings(tmp_path, environment="production", secret_key=SecretStr(secret))
    # development tolerates them
    assert make_settings(tmp_path, environment="development", secret_key=SecretStr(secret))


def test_without_a_secret_one_is_generated_once_and_kept_private(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    first = settings.signing_keys()[0]
    assert len(first) >= 48
    assert make_settings(tmp_path).signing_keys()[0] == first
    assert (tmp_path / "secret.key").stat().st_mode & 0o077 == 0


def test_default_store_is_sqlite_under_the_data_dir(tmp_path: Path) -> None:
    assert (
        make_settings(tmp_path).resolved_database_url
        == f"sqlite+aiosqlite:///{tmp_path}/portico.db"
    )


SPEC = ListSpec(
    sortable=frozenset({"name", "createdAt"}), default_sort="name", filterable=frozenset({"name"})
)


def test_list_query_parses_page_size_sort_and_filters() -> None:
    query = SPEC.parse([("page", "3"), ("size", "5"), ("sort", "-createdAt,name"), ("name", "x")])
    assert (query.page, query.size, query.offset) == (3, 5, 10)
    assert query.sort == (SortKey("createdAt", True), SortKey("name", False))
    assert query.filters == {"name": "x"}


@pytest.mark.parametrize(
    ("params", "parameter"),
    [
        ([("colour", "red")], "colour"),
        ([("sort", "colour")], "sort"),
        ([("sort", "")], "sort"),
        ([("page", "0")], "page"),
        ([("page", "-1")], "page"),
        ([("size", "101")], "size"),
        ([("size", "ten")], "size"),
        ([("name", "a"), ("name", "b")], "name"),
        ([("page", "²")], "page"),  # str.isdigit() says yes, int() raises
        ([("page", "١")], "page"),  # Arabic-Indic one: int() reads it as 1
        ([("size", "٥")], "size"),
        ([("page", "9" * 5000)], "page"),  # past int()'s 4300-digit limit
        ([("sort", "name,name")], "sort"),
        ([("sort", "name,-name")], "sort"),
        ([("sort", "-createdAt,name,createdAt")], "sort"),
    ],
)
def test_list_query_rejects_unknown_and_malformed(
    params: list[tuple[str, str]], parameter: str
) -> None:
    with pytest.raises(ValidationFailed) as caught:
        SPEC.parse(params)
    assert caught.value.errors[0]["parameter"] == parameter


def test_bracket_filters_for_the_marketplace_style() -> None:
    spec = ListSpec(
        sortable=frozenset({"name"}),
        default_sort="name",
        size_param="limit",
        filterable=frozenset({"status"}),
        filter_style="bracket",
        default_size=50,
    )
    query = spec.parse([("filter[status]", "active"), ("limit", "10")])
    assert query.filters == {"status": "active"} and query.size == 10
    with pytest.raises(ValidationFailed):
        spec.parse([("filter[colour]", "red")])
    with pytest.raises(ValidationFailed):
        spec.parse([("status", "active")])


def _described_sort(spec: ListSpec) -> re.Pattern[str]:
    (sort,) = (p for p in spec.openapi_parameters() if p["name"] == "sort")
    return re.compile(sort["schema"]["pattern"])


_SORT_PARTS = st.sampled_from(
    ["name", "-name", "createdAt", "-createdAt", "", "-", "nam", "x", "name²", "١"]
)


@given(st.lists(_SORT_PARTS, max_size=4).map(",".join) | st.text(alphabet="-,acdeimnrtA²١"))
def test_the_described_sort_pattern_admits_only_what_parse_accepts(raw: str) -> None:
    """A client that follows the OpenAPI document is never refused, and what the document
    rules out (an empty sort, an unknown key, a key twice) is refused."""
    accepted = True
    try:
        SPEC.parse([("sort", raw)])
    except ValidationFailed:
        accepted = False
    if _described_sort(SPEC).match(raw):
        assert accepted, raw
    elif raw.strip() == raw and " " not in raw:
        assert not accepted, raw


#: digits of any script (Nd: '١', '５'...; No: '²', '½'...), signs and spaces, and ASCII numbers
_INTEGERS = (
    st.text(alphabet=st.characters(categories=("Nd", "No")) | st.sampled_from("0123456789+- "))
    | st.integers(min_value=-5, max_value=200).map(str)
    | st.integers().map(str)
)


@given(st.sampled_from(["page", "size"]), _INTEGERS)
def test_the_described_integer_bounds_admit_only_what_parse_accepts(name: str, raw: str) -> None:
    """page and size are accepted exactly when they are ASCII digits within the described
    bounds; anything else is a 400 naming the parameter, never another error."""
    (described,) = (p for p in SPEC.openapi_parameters() if p["name"] == name)
    bounds = described["schema"]
    errors: list[dict[str, str]] = []
    try:
        query = SPEC.parse([(name, raw)])
    except ValidationFailed as refused:
        errors = refused.errors
    else:
        assert (query.page if name == "page" else query.size) == int(raw)
    accepted = not errors
    assert accepted or [e["parameter"] for e in errors] == [name]
    valid = re.fullmatch("[0-9]+", raw) is not None and (
        bounds["minimum"] <= int(raw) <= bounds["maximum"]
    )
    assert accepted == valid, raw


def test_a_spec_accepts_what_it_parses() -> None:
    spec = ListSpec(
        sortable=frozenset({"name"}),
        default_sort="name",
        size_param="limit",
        filterable=frozenset({"status"}),
        filter_style="bracket",
        extra_params=frozenset({"format"}),
    )
    for key in ("page", "limit", "sort", "filter[status]", "format"):
        assert spec.accepts(key), key
    for key in ("size", "status", "filter[colour]", "filter[", "colour"):
        assert not spec.accepts(key), key
    assert SPEC.accepts("name") and not SPEC.accepts("createdAt")


def test_described_parameters_name_the_spec_s_parameters_and_filters() -> None:
    spec = ListSpec(
        sortable=frozenset({"name"}),
        default_sort="name",
        size_param="limit",
        filterable=frozenset({"status", "kind"}),
        filter_style="bracket",
        max_size=500,
    )
    status = {"description": "In this status.", "schema": {"type": "string", "enum": ["a"]}}
    described = {p["name"]: p for p in spec.openapi_parameters({"status": status})}
    assert list(described) == ["page", "limit", "sort", "filter[kind]", "filter[status]"]
    assert described["limit"]["schema"]["maximum"] == 500
    assert described["filter[status]"]["schema"] == status["schema"]
    assert described["filter[kind]"]["schema"] == {"type": "string"}
    assert [p["name"] for p in spec.openapi_parameters(paged=False)] == [
        "filter[kind]",
        "filter[status]",
    ]


def test_redaction_reaches_any_depth() -> None:
    value = {
        "email": "a@b.c",
        "password": "hunter2",
        "nested": [{"clientSecret": "s", "ok": 1}],
        "note": "Authorization: Bearer abc.def.ghi and password=swordfish",
    }
    redacted = redact(value)
    assert redacted["password"] == REDACTED
    assert redacted["nested"][0] == {"clientSecret": REDACTED, "ok": 1}
    assert "abc.def.ghi" not in redacted["note"] and "swordfish" not in redacted["note"]
    assert redacted["email"] == "a@b.c"


def test_log_records_never_carry_credentials() -> None:
    record = logging.makeLogRecord(
        {
            "msg": "login with %s",
            "args": ("password=hunter2",),
            "levelno": 20,
            "levelname": "INFO",
            "name": "t",
        }
    )
    record.body = {"refresh_token": "r-token", "email": "x@example.com"}
    record.token = "raw-token"
    RedactingFilter().filter(record)
    line = JsonFormatter().format(record)
    assert "hunter2" not in line and "r-token" not in line and "raw-token" not in line
    assert json.loads(line)["body"]["email"] == "x@example.com"


def test_client_address_believes_forwarded_for_only_from_trusted_proxies() -> None:
    trusted = parse_networks(["10.0.0.0/8"])
    assert client_address("203.0.113.9", "1.2.3.4", trusted) == "203.0.113.9"
    assert client_address("10.0.0.2", "1.2.3.4", trusted) == "1.2.3.4"
    assert client_address("10.0.0.2", "6.6.6.6, 1.2.3.4, 10.0.0.7", trusted) == "1.2.3.4"
    assert client_address("10.0.0.2", "garbage", trusted) == "10.0.0.2"
    assert client_address("10.0.0.2", "1.2.3.4", ()) == "10.0.0.2"


def test_tokens_carry_kid_and_survive_a_key_rotation() -> None:
    clock = Clock()
    old = AccessTokenService([KEY_A], clock, audience="x")
    token = old.issue("user-1").token
    rotated = AccessTokenService([KEY_B, KEY_A], clock, audience="x")
    assert rotated.verify(token)["sub"] == "user-1"
    assert AccessTokenService([KEY_B], clock, audience="x").issue("u").token != token
    with pytest.raises(Unauthorized):
        AccessTokenService([KEY_B], clock, audience="x").verify(token)
    with pytest.raises(Unauthorized):
        AccessTokenService([KEY_A], clock, audience="other").verify(token)
    clock.advance(timedelta(hours=1))
    with pytest.raises(TokenExpired):
        rotated.verify(token)
