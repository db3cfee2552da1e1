"""The contracts of the AI, transformation and observability plugins: registry entries as
plugins.md's table gives them, the seed's shapes, defaults, required fields, bounds and each
semantic check's message, all through the registry's ``check_plugin`` as a deploy runs it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from portico.core.validation import json_path
from portico.gateway.plugins.base import Category
from portico.gateway.plugins.registry import PLUGINS, PluginCheckError, check_plugin

# plugins.md's table, written out: a change of order, category or re-rank in a module fails
TABLE: dict[str, tuple[Category, int, bool]] = {
    "ai-rate-limiting": (Category.AI, 220, True),
    "ai-prompt-guard": (Category.AI, 400, True),
    "ai-prompt-template": (Category.AI, 410, True),
    "proxy-rewrite": (Category.TRANSFORMATION, 420, True),
    "ai-proxy": (Category.AI, 430, True),
    "response-rewrite": (Category.TRANSFORMATION, 500, True),
    "metrics-export": (Category.OBSERVABILITY, 900, False),
    "trace-export": (Category.OBSERVABILITY, 910, False),
    "http-logger": (Category.OBSERVABILITY, 950, True),
    "stream-logger": (Category.OBSERVABILITY, 951, True),
    "columnar-logger": (Category.OBSERVABILITY, 952, True),
    "aggregator-logger": (Category.OBSERVABILITY, 953, True),
    "search-logger": (Category.OBSERVABILITY, 954, True),
}

# the seed's shapes (plus what a config needs to be valid at all)
SEED: dict[str, dict[str, Any]] = {
    "ai-rate-limiting": {"limit": 1000, "time_window": 60},
    "ai-prompt-guard": {"match_all_roles": True, "deny_patterns": ["(?i)ignore previous"]},
    "ai-prompt-template": {
        "templates": [
            {
                "name": "qa",
                "template": {
                    "model": "gpt-4o",
                    "messages": [
                        {"role": "system", "content": "Be brief."},
                        {"role": "user", "content": "Answer: {{question}}"},
                    ],
                },
            }
        ]
    },
    "proxy-rewrite": {"regex_uri": ["^/orders/(.*)", "/$1"]},
    "ai-proxy": {
        "provider": "openai",
        "model": {"source": "header", "header": "X-Model"},
        "auth": {"header": {"Authorization": "Bearer sk-test"}},
    },
    "response-rewrite": {"headers": {"set": {"X-Served-By": "portico"}}},
    "metrics-export": {"prefer_name": True},
    "trace-export": {
        "endpoint": "http://collector:4318/v1/traces",
        "sample_ratio": 0.25,
        "service_name": "shop",
    },
    "http-logger": {"uri": "http://logs.example.com/ingest"},
    "stream-logger": {"broker_list": {"kafka-1": 9092, "10.0.0.7": 9093}, "stream_topic": "logs"},
    "columnar-logger": {
        "endpoint_addr": "http://clickhouse:8123",
        "database": "gateway",
        "logtable": "access_log",
    },
    "aggregator-logger": {"endpoint_addrs": ["http://loki:3100"], "tenant_id": "team-a"},
    "search-logger": {"endpoint_addr": "http://es:9200", "field": {"index": "gateway-logs"}},
}

LOGGERS = ("http-logger", "stream-logger", "columnar-logger", "aggregator-logger", "search-logger")
BATCH_DEFAULTS = {
    "batch_max_size": 1000,
    "inactive_timeout": 5,
    "buffer_duration": 60,
    "max_retry_count": 0,
    "retry_delay": 1,
}

_DROP = object()


def seed(name: str, **changes: Any) -> dict[str, Any]:
    """The seed's config of ``name`` with top-level ``changes`` (``_DROP`` removes a key)."""
    raw = copy.deepcopy(SEED[name])
    for key, value in changes.items():
        if value is _DROP:
            raw.pop(key, None)
        else:
            raw[key] = value
    return raw


def refused(name: str, raw: Any) -> PluginCheckError:
    with pytest.raises(PluginCheckError) as caught:
        check_plugin(name, raw)
    assert caught.value.message.startswith(f"failed to check the configuration of plugin {name}:")
    return caught.value


def dump(name: str, raw: dict[str, Any]) -> dict[str, Any]:
    return check_plugin(name, raw)[1].model_dump(by_alias=True)


# --- registry entries and the seed's shapes ---------------------------------------------------


@pytest.mark.parametrize("name", sorted(TABLE))
def test_registry_entry_matches_plugins_md(name: str) -> None:
    spec = PLUGINS[name]
    assert (spec.name, spec.category, spec.order, spec.reorderable) == (name, *TABLE[name])
    assert spec.consumer is None and spec.description


@pytest.mark.parametrize("name", sorted(SEED))
def test_seed_shape_validates(name: str) -> None:
    spec, config = check_plugin(name, seed(name))
    assert spec is PLUGINS[name]
    dumped = config.model_dump(by_alias=True, exclude_unset=True)
    assert {k: v for k, v in dumped.items() if k != "_meta"} == SEED[name]


@pytest.mark.parametrize("name", sorted(TABLE))
def test_meta_order_only_for_reorderable(name: str) -> None:
    raw = seed(name, _meta={"order": 777})
    if TABLE[name][2]:
        assert check_plugin(name, raw)[1].meta is not None
    else:
        error = refused(name, raw)
        assert error.reason == f'property "_meta" is not allowed: {name} cannot be re-ranked'
        assert error.pointer == "/_meta"


@pytest.mark.parametrize("name", sorted(TABLE))
def test_unknown_property_refused(name: str) -> None:
    error = refused(name, seed(name, surprise=1))
    assert (error.reason, error.pointer) == ('property "surprise" is not allowed', "/surprise")


# --- defaults ---------------------------------------------------------------------------------

DEFAULTS: list[tuple[str, dict[str, Any]]] = [
    ("ai-rate-limiting", {"rejected_code": 429, "limit_strategy": "total_tokens"}),
    (
        "ai-prompt-guard",
        {"allow_patterns": [], "match_all_conversation_history": False},
    ),
    ("metrics-export", {"prefer_name": False}),
    (
        "ai-proxy",
        {"timeout": 30_000, "keepalive": True, "override": None},
    ),
    ("proxy-rewrite", {"use_real_request_uri_unsafe": False, "uri": None, "headers": None}),
    ("response-rewrite", {"body_base64": False, "status_code": None, "body": None}),
    (
        "http-logger",
        {
            "timeout": 3,
            "auth_header": None,
            "include_req_body": False,
            "include_resp_body": False,
            "concat_method": "json",
        },
    ),
    (
        "stream-logger",
        {"key": None, "timeout": 3, "producer_type": "async", "required_acks": 1},
    ),
    ("columnar-logger", {"user": "default", "password": None, "timeout": 3}),
    (
        "aggregator-logger",
        {"endpoint_uri": "/loki/api/v1/push", "log_labels": {"job": "portico"}, "timeout": 3000},
    ),
    ("search-logger", {"auth": None, "ssl_verify": True, "timeout": 10}),
]


@pytest.mark.parametrize(("name", "expected"), DEFAULTS)
def test_defaults_filled(name: str, expected: dict[str, Any]) -> None:
    dumped = dump(name, {} if name == "metrics-export" else seed(name))
    assert {key: dumped[key] for key in expected} == expected


@pytest.mark.parametrize("name", LOGGERS)
def test_loggers_share_apisix_batch_defaults(name: str) -> None:
    dumped = dump(name, seed(name))
    assert {key: dumped[key] for key in BATCH_DEFAULTS} == BATCH_DEFAULTS


def test_defaults_of_seed_fields_left_out() -> None:
    assert dump("trace-export", {"endpoint": "http://c:4318/v1/traces"})["sample_ratio"] == 1.0
    assert dump("trace-export", {"endpoint": "http://c:4318/v1/traces"})["service_name"] == (
        "portico"
    )
    assert dump("aggregator-logger", {"endpoint_addrs": ["http://l:3100"]})["tenant_id"] == "fake"
    assert dump("ai-proxy", seed("ai-proxy", model=_DROP))["model"] == {
        "source": "config",
        "header": None,
        "name": None,
    }
    guard = dump("ai-prompt-guard", {"deny_patterns": ["x"]})
    assert guard["match_all_roles"] is False


# --- required fields --------------------------------------------------------------------------

REQUIRED: list[tuple[str, str]] = [
    ("ai-rate-limiting", "limit"),
    ("ai-rate-limiting", "time_window"),
    ("ai-prompt-template", "templates"),
    ("ai-proxy", "provider"),
    ("ai-proxy", "auth"),
    ("trace-export", "endpoint"),
    ("http-logger", "uri"),
    ("stream-logger", "broker_list"),
    ("stream-logger", "stream_topic"),
    ("columnar-logger", "endpoint_addr"),
    ("columnar-logger", "database"),
    ("columnar-logger", "logtable"),
    ("aggregator-logger", "endpoint_addrs"),
    ("search-logger", "endpoint_addr"),
    ("search-logger", "field"),
]


@pytest.mark.parametrize(("name", "field"), REQUIRED)
def test_missing_required_property(name: str, field: str) -> None:
    error = refused(name, seed(name, **{field: _DROP}))
    assert (error.reason, error.pointer) == (f'property "{field}" is required', f"/{field}")


def test_ai_proxy_without_auth_reads_exactly_so() -> None:
    raw = {"provider": "openai", "model": {"source": "config", "name": "gpt-4o"}}
    assert refused("ai-proxy", raw).reason == 'property "auth" is required'


def test_aggregator_logger_singular_endpoint_addr_reads_as_the_seed_says() -> None:
    # the seed's error case: the missing property is reported before the unknown one
    error = refused("aggregator-logger", {"endpoint_addr": "http://loki:3100", "tenant_id": "a"})
    assert error.reason == 'property "endpoint_addrs" is required'
    assert error.message == (
        "failed to check the configuration of plugin aggregator-logger: "
        'property "endpoint_addrs" is required'
    )


NESTED_REQUIRED: list[tuple[str, dict[str, Any], str]] = [
    ("ai-prompt-template", {"templates": [{"template": {}}]}, "templates.0.name"),
    ("ai-prompt-template", {"templates": [{"name": "a"}]}, "templates.0.template"),
    (
        "ai-prompt-template",
        {
            "templates": [
                {"name": "a", "template": {"messages": [{"role": "user", "content": "x"}]}}
            ]
        },
        "templates.0.template.model",
    ),
    (
        "ai-prompt-template",
        {"templates": [{"name": "a", "template": {"model": "m"}}]},
        "templates.0.template.messages",
    ),
    (
        "ai-prompt-template",
        {"templates": [{"name": "a", "template": {"model": "m", "messages": [{"role": "user"}]}}]},
        "templates.0.template.messages.0.content",
    ),
    ("ai-proxy", seed("ai-proxy", auth={}), "auth.header"),
    ("ai-proxy", seed("ai-proxy", override={}), "override.endpoint"),
    ("search-logger", seed("search-logger", field={}), "field.index"),
    ("search-logger", seed("search-logger", auth={"username": "u"}), "auth.password"),
]


@pytest.mark.parametrize(("name", "raw", "dotted"), NESTED_REQUIRED)
def test_missing_nested_property(name: str, raw: dict[str, Any], dotted: str) -> None:
    error = refused(name, raw)
    assert error.reason == f'property "{dotted}" is required'
    assert error.pointer == "/" + dotted.replace(".", "/")


# --- types and bounds: the pointer names the field --------------------------------------------

INVALID: list[tuple[str, dict[str, Any], str]] = [
    ("ai-rate-limiting", {"limit": 0}, "/limit"),
    ("ai-rate-limiting", {"limit": "100"}, "/limit"),
    ("ai-rate-limiting", {"limit": 1.5}, "/limit"),
    ("ai-rate-limiting", {"time_window": 0}, "/time_window"),
    ("ai-rate-limiting", {"time_window": True}, "/time_window"),
    ("ai-rate-limiting", {"rejected_code": 199}, "/rejected_code"),
    ("ai-rate-limiting", {"rejected_code": 600}, "/rejected_code"),
    ("ai-rate-limiting", {"limit_strategy": "expression"}, "/limit_strategy"),
    ("ai-prompt-guard", {"match_all_roles": "yes"}, "/match_all_roles"),
    ("ai-prompt-guard", {"match_all_conversation_history": 1}, "/match_all_conversation_history"),
    ("ai-prompt-guard", {"deny_patterns": "x"}, "/deny_patterns"),
    ("ai-prompt-guard", {"allow_patterns": ["ok", ""]}, "/allow_patterns/1"),
    ("ai-prompt-guard", {"deny_patterns": ["a"] * 101}, "/deny_patterns"),
    ("ai-prompt-template", {"templates": []}, "/templates"),
    ("ai-prompt-template", {"templates": {"name": "x"}}, "/templates"),
    (
        "ai-prompt-template",
        {"templates": [{"name": "a", "template": {"model": "m", "messages": []}}]},
        "/templates/0/template/messages",
    ),
    (
        "ai-prompt-template",
        {
            "templates": [
                {
                    "name": "a",
                    "template": {"model": "m", "messages": [{"role": "tool", "content": "x"}]},
                }
            ]
        },
        "/templates/0/template/messages/0/role",
    ),
    (
        "ai-prompt-template",
        {"templates": [{"name": "", "template": {"model": "m", "messages": []}}]},
        "/templates/0/name",
    ),
    ("ai-proxy", {"provider": "skynet"}, "/provider"),
    ("ai-proxy", {"provider": 1}, "/provider"),
    ("ai-proxy", {"model": {"source": "body"}}, "/model/source"),
    ("ai-proxy", {"model": {"source": "header", "header": "X Model"}}, "/model/header"),
    ("ai-proxy", {"auth": {"header": {}}}, "/auth/header"),
    ("ai-proxy", {"auth": {"header": {"Authorization": 5}}}, "/auth/header/Authorization"),
    (
        "ai-proxy",
        {"auth": {"header": {"Authorization": "a\r\nX: y"}}},
        "/auth/header/Authorization",
    ),
    ("ai-proxy", {"auth": {"header": {"A": "b"}, "query": {"key": "c"}}}, "/auth/query"),
    ("ai-proxy", {"timeout": 0}, "/timeout"),
    ("ai-proxy", {"timeout": 600_001}, "/timeout"),
    ("ai-proxy", {"keepalive": "true"}, "/keepalive"),
    ("proxy-rewrite", {"regex_uri": ["^/a"]}, "/regex_uri"),
    ("proxy-rewrite", {"regex_uri": ["^/a", "/b", "/c"]}, "/regex_uri"),
    ("proxy-rewrite", {"regex_uri": "^/a"}, "/regex_uri"),
    ("proxy-rewrite", {"regex_uri": ["^/a", 2]}, "/regex_uri/1"),
    ("proxy-rewrite", {"regex_uri": _DROP, "uri": "no-slash"}, "/uri"),
    ("proxy-rewrite", {"host": "bad host"}, "/host"),
    ("proxy-rewrite", {"method": "get"}, "/method"),
    ("proxy-rewrite", {"headers": {"set": {}}}, "/headers/set"),
    ("proxy-rewrite", {"headers": {"remove": ["Bad Name"]}}, "/headers/remove/0"),
    ("proxy-rewrite", {"headers": {"add": {"X-A": "x" * 4097}}}, "/headers/add/X-A"),
    ("proxy-rewrite", {"headers": {"set": {"X-A": "a\nb"}}}, "/headers/set/X-A"),
    ("proxy-rewrite", {"headers": {"replace": {"X-A": "1"}}}, "/headers/replace"),
    ("proxy-rewrite", {"use_real_request_uri_unsafe": 1}, "/use_real_request_uri_unsafe"),
    ("response-rewrite", {"status_code": 199}, "/status_code"),
    ("response-rewrite", {"status_code": 599}, "/status_code"),
    ("response-rewrite", {"status_code": "200"}, "/status_code"),
    ("response-rewrite", {"body": 5}, "/body"),
    ("response-rewrite", {"body_base64": "no"}, "/body_base64"),
    ("response-rewrite", {"headers": {"set": {"X-A": 1}}}, "/headers/set/X-A"),
    ("response-rewrite", {"headers": {"add": ["no colon"]}}, "/headers/add/0"),
    ("response-rewrite", {"headers": {"add": ["X-Empty:  "]}}, "/headers/add/0"),
    ("response-rewrite", {"headers": {"add": ["X-A: a\r\nX-B: b"]}}, "/headers/add/0"),
    ("response-rewrite", {"headers": {"remove": []}}, "/headers/remove"),
    ("metrics-export", {"prefer_name": "false"}, "/prefer_name"),
    ("trace-export", {"endpoint": "collector:4318"}, "/endpoint"),
    ("trace-export", {"endpoint": 4318}, "/endpoint"),
    ("trace-export", {"sample_ratio": 1.5}, "/sample_ratio"),
    ("trace-export", {"sample_ratio": -0.1}, "/sample_ratio"),
    ("trace-export", {"sample_ratio": "0.5"}, "/sample_ratio"),
    ("trace-export", {"sample_ratio": True}, "/sample_ratio"),
    ("trace-export", {"service_name": ""}, "/service_name"),
    ("trace-export", {"additional_attributes": ["remote_addr"]}, "/additional_attributes/0"),
    ("http-logger", {"uri": "ftp://logs/x"}, "/uri"),
    ("http-logger", {"uri": "http://user:pw@logs/x"}, "/uri"),
    ("http-logger", {"timeout": 0}, "/timeout"),
    ("http-logger", {"concat_method": "csv"}, "/concat_method"),
    ("http-logger", {"auth_header": ""}, "/auth_header"),
    ("http-logger", {"include_req_body": "false"}, "/include_req_body"),
    ("stream-logger", {"broker_list": {}}, "/broker_list"),
    ("stream-logger", {"broker_list": ["kafka:9092"]}, "/broker_list"),
    ("stream-logger", {"broker_list": {"kafka": "9092"}}, "/broker_list/kafka"),
    ("stream-logger", {"broker_list": {"kafka": 0}}, "/broker_list/kafka"),
    ("stream-logger", {"broker_list": {"kafka": 65536}}, "/broker_list/kafka"),
    ("stream-logger", {"stream_topic": "bad topic"}, "/stream_topic"),
    ("stream-logger", {"stream_topic": "t" * 250}, "/stream_topic"),
    ("stream-logger", {"producer_type": "batch"}, "/producer_type"),
    ("stream-logger", {"required_acks": 2}, "/required_acks"),
    ("stream-logger", {"required_acks": True}, "/required_acks"),
    ("columnar-logger", {"endpoint_addr": "clickhouse:8123"}, "/endpoint_addr"),
    ("columnar-logger", {"user": ""}, "/user"),
    ("columnar-logger", {"password": 1234}, "/password"),
    ("aggregator-logger", {"endpoint_addrs": []}, "/endpoint_addrs"),
    ("aggregator-logger", {"endpoint_addrs": "http://loki:3100"}, "/endpoint_addrs"),
    ("aggregator-logger", {"endpoint_addrs": ["http://a", "loki"]}, "/endpoint_addrs/1"),
    ("aggregator-logger", {"tenant_id": "a b"}, "/tenant_id"),
    ("aggregator-logger", {"tenant_id": "t" * 151}, "/tenant_id"),
    ("aggregator-logger", {"endpoint_uri": "loki/push"}, "/endpoint_uri"),
    ("aggregator-logger", {"log_labels": {}}, "/log_labels"),
    ("aggregator-logger", {"log_labels": {"job": ""}}, "/log_labels/job"),
    ("aggregator-logger", {"timeout": 60_001}, "/timeout"),
    ("search-logger", {"field": {"index": ""}}, "/field/index"),
    ("search-logger", {"field": {"index": "logs", "type": "_doc"}}, "/field/type"),
    ("search-logger", {"field": "logs"}, "/field"),
    ("search-logger", {"ssl_verify": "true"}, "/ssl_verify"),
    ("search-logger", {"timeout": 61}, "/timeout"),
    ("search-logger", {"auth": {"username": "", "password": "p"}}, "/auth/username"),
]


@pytest.mark.parametrize(("name", "changes", "pointer"), INVALID)
def test_invalid_value_is_located(name: str, changes: dict[str, Any], pointer: str) -> None:
    error = refused(name, seed(name, **changes))
    assert error.pointer == pointer, error.reason


BATCH_INVALID: list[tuple[str, Any]] = [
    ("batch_max_size", 0),
    ("batch_max_size", 100_001),
    ("batch_max_size", "10"),
    ("inactive_timeout", 0),
    ("buffer_duration", 0),
    ("max_retry_count", -1),
    ("retry_delay", -1),
    ("retry_delay", 1.5),
]


@pytest.mark.parametrize("name", LOGGERS)
@pytest.mark.parametrize(("field", "value"), BATCH_INVALID)
def test_batch_fields_bounded(name: str, field: str, value: Any) -> None:
    error = refused(name, seed(name, **{field: value}))
    assert error.pointer == f"/{field}"
    assert error.reason.startswith(json_path([field]) + ": ")


@pytest.mark.parametrize("name", LOGGERS)
def test_batch_fields_accepted(name: str) -> None:
    raw = seed(name, batch_max_size=1, inactive_timeout=1, max_retry_count=3, retry_delay=0)
    assert dump(name, raw)["batch_max_size"] == 1


@pytest.mark.parametrize("ratio", [0, 1, 0.0, 0.5, 1.0])
def test_sample_ratio_accepts_numbers_from_0_to_1(ratio: float) -> None:
    assert dump("trace-export", seed("trace-export", sample_ratio=ratio))["sample_ratio"] == ratio


@pytest.mark.parametrize("provider", ["openai", "anthropic", "deepseek", "mistral", "gemini"])
def test_ai_proxy_providers_with_a_known_endpoint(provider: str) -> None:
    check_plugin("ai-proxy", seed("ai-proxy", provider=provider))


def test_ai_proxy_model_from_config_and_endpoint_override() -> None:
    raw = seed(
        "ai-proxy",
        provider="openai-compatible",
        model={"name": "llama-3"},
        override={"endpoint": "http://llm.internal:8000/v1/chat/completions"},
    )
    config = dump("ai-proxy", raw)
    assert config["model"] == {"source": "config", "header": None, "name": "llama-3"}


# --- semantic checks: their own messages ------------------------------------------------------

SEMANTIC: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "ai-prompt-guard",
        {"deny_patterns": _DROP},
        "at least one of allow_patterns or deny_patterns must be non-empty",
        "",
    ),
    (
        "ai-prompt-guard",
        {"allow_patterns": [], "deny_patterns": []},
        "at least one of allow_patterns or deny_patterns must be non-empty",
        "",
    ),
    (
        "ai-prompt-guard",
        {"deny_patterns": ["ok", "(unclosed"]},
        "invalid regular expression: missing ), unterminated subpattern at position 0",
        "/deny_patterns/1",
    ),
    (
        "ai-proxy",
        {"model": {"source": "header"}},
        'property "model.header" is required when source is "header"',
        "/model/header",
    ),
    (
        "ai-proxy",
        {"model": {"source": "header", "header": "X-Model", "name": "gpt-4o"}},
        'model.name is only used when source is "config"',
        "/model/name",
    ),
    (
        "ai-proxy",
        {"model": {"header": "X-Model"}},
        'model.header is only used when source is "header"',
        "/model/header",
    ),
    (
        "ai-proxy",
        {"provider": "openai-compatible"},
        'property "override.endpoint" is required when provider is "openai-compatible"',
        "/override",
    ),
    (
        "ai-proxy",
        {"provider": "azure-openai"},
        'property "override.endpoint" is required when provider is "azure-openai"',
        "/override",
    ),
    (
        "proxy-rewrite",
        {"uri": "/fixed"},
        "uri and regex_uri are mutually exclusive",
        "/uri",
    ),
    (
        "proxy-rewrite",
        {"regex_uri": ["^/(a", "/$1"]},
        "invalid regex_uri pattern: missing ), unterminated subpattern at position 2",
        "/regex_uri/0",
    ),
    (
        "proxy-rewrite",
        {"regex_uri": ["^/a/(.*)", "/$2"]},
        "regex_uri replacement refers to $2 but the pattern has 1 group(s)",
        "/regex_uri/1",
    ),
    (
        "proxy-rewrite",
        {"regex_uri": ["^/a/(.*)", "/${2}/x"]},
        "regex_uri replacement refers to $2 but the pattern has 1 group(s)",
        "/regex_uri/1",
    ),
    (
        "proxy-rewrite",
        {"regex_uri": _DROP, "use_real_request_uri_unsafe": True},
        "nothing to rewrite: set uri, regex_uri, host, method or headers",
        "",
    ),
    (
        "proxy-rewrite",
        {"headers": {}},
        "headers: set at least one of set, add or remove",
        "/headers",
    ),
    (
        "response-rewrite",
        {"headers": _DROP},
        "nothing to rewrite: set headers, status_code or body",
        "",
    ),
    (
        "response-rewrite",
        {"headers": {}},
        "headers: set at least one of set, add or remove",
        "/headers",
    ),
    (
        "response-rewrite",
        {"body": "not base64!", "body_base64": True},
        "body_base64 is true but body is not valid base64",
        "",
    ),
    (
        "response-rewrite",
        {"body_base64": True},
        "body_base64 is true but body is empty",
        "",
    ),
    (
        "stream-logger",
        {"required_acks": 0},
        "required_acks must be 1 or -1 (0 is not supported)",
        "/required_acks",
    ),
    (
        "stream-logger",
        {"stream_topic": ".."},
        'stream_topic cannot be "." or ".."',
        "/stream_topic",
    ),
    (
        "stream-logger",
        {"broker_list": {"bad_host!": 9092}},
        "broker 'bad_host!' is not a hostname or IP address",
        "/broker_list/bad_host!/[key]",
    ),
    (
        "search-logger",
        {"field": {"index": "Logs"}},
        "index must be lowercase",
        "/field/index",
    ),
    (
        "search-logger",
        {"field": {"index": "a b,c"}},
        "index must not contain ' ' ','",
        "/field/index",
    ),
    (
        "search-logger",
        {"field": {"index": "_logs"}},
        "index must not start with '-', '_' or '+'",
        "/field/index",
    ),
    ("search-logger", {"field": {"index": ".."}}, "index cannot be '.' or '..'", "/field/index"),
    (
        "search-logger",
        {"field": {"index": "l" * 256}},
        "index must be at most 255 bytes long",
        "/field/index",
    ),
    (
        "search-logger",
        {"endpoint_addr": "http://es:9200/"},
        "endpoint_addr must not end with '/' (/_bulk is appended)",
        "/endpoint_addr",
    ),
]


@pytest.mark.parametrize(("name", "changes", "reason", "pointer"), SEMANTIC)
def test_semantic_check_message(
    name: str, changes: dict[str, Any], reason: str, pointer: str
) -> None:
    error = refused(name, seed(name, **changes))
    assert (error.reason, error.pointer) == (reason, pointer)


def test_duplicate_template_name_is_refused_at_its_index() -> None:
    first = SEED["ai-prompt-template"]["templates"][0]
    other = {**copy.deepcopy(first), "name": "other"}
    error = refused("ai-prompt-template", {"templates": [first, other, copy.deepcopy(first)]})
    assert (error.reason, error.pointer) == ('duplicate template name "qa"', "/templates/2/name")


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("proxy-rewrite", {"uri": "/v2/orders", "host": "api.internal:8080", "method": "POST"}),
        (
            "proxy-rewrite",
            {"headers": {"set": {"X-A": "1"}, "add": {"X-B": ""}, "remove": ["Cookie"]}},
        ),
        ("proxy-rewrite", {"regex_uri": ["^/shop/(?P<rest>.*)", "/$0"]}),
        ("response-rewrite", {"headers": {"add": ["Set-Cookie: a=1", "Set-Cookie: b=2"]}}),
        ("response-rewrite", {"headers": {"remove": ["Server"]}}),
        ("response-rewrite", {"status_code": 503, "body": '{"error":"maintenance"}'}),
        ("response-rewrite", {"body": "aGVsbG8=", "body_base64": True}),
        ("ai-prompt-guard", {"allow_patterns": ["^about our products"]}),
        ("stream-logger", seed("stream-logger", broker_list={"::1": 9092}, required_acks=-1)),
        ("search-logger", seed("search-logger", auth={"username": "u", "password": "p"})),
        ("columnar-logger", seed("columnar-logger", database="_logs", logtable="t2")),
        ("trace-export", seed("trace-export", additional_attributes=["$remote_addr"])),
        (
            "aggregator-logger",
            seed("aggregator-logger", log_labels={"job": "gw", "env": "prod"}),
        ),
    ],
)
def test_valid_variants(name: str, raw: dict[str, Any]) -> None:
    check_plugin(name, raw)


@pytest.mark.parametrize(
    "identifier", ["logs; DROP TABLE x", "1logs", "logs.access", "`logs`", "", "l" * 129]
)
@pytest.mark.parametrize("field", ["database", "logtable"])
def test_columnar_identifiers_cannot_carry_sql(field: str, identifier: str) -> None:
    error = refused("columnar-logger", seed("columnar-logger", **{field: identifier}))
    assert error.pointer == f"/{field}"


# --- secrets and the JSON schema ---------------------------------------------------------------

SECRETS = {
    "ai-proxy": {"auth"},
    "http-logger": {"auth_header"},
    "columnar-logger": {"password"},
    "search-logger": {"auth.password"},
}


@pytest.mark.parametrize("name", sorted(TABLE))
def test_secret_fields(name: str) -> None:
    assert set(PLUGINS[name].config.secret_fields) == SECRETS.get(name, set())


REQUIRED_IN_SCHEMA = {
    "ai-rate-limiting": {"limit", "time_window"},
    "ai-prompt-guard": set(),
    "ai-prompt-template": {"templates"},
    "proxy-rewrite": set(),
    "ai-proxy": {"provider", "auth"},
    "response-rewrite": set(),
    "metrics-export": set(),
    "trace-export": {"endpoint"},
    "http-logger": {"uri"},
    "stream-logger": {"broker_list", "stream_topic"},
    "columnar-logger": {"endpoint_addr", "database", "logtable"},
    "aggregator-logger": {"endpoint_addrs"},
    "search-logger": {"endpoint_addr", "field"},
}


@pytest.mark.parametrize("name", sorted(TABLE))
def test_json_schema_describes_every_property(name: str) -> None:
    schema = PLUGINS[name].json_schema()
    assert set(schema.get("required", [])) == REQUIRED_IN_SCHEMA[name]
    assert ("_meta" in schema["properties"]) is TABLE[name][2]
    assert set(schema["properties"]) >= set(SEED[name])
    objects = [schema, *schema.get("$defs", {}).values()]
    for obj in objects:
        for prop, sub in obj.get("properties", {}).items():
            assert sub.get("description"), f"{name}: {prop} has no description"


def test_stream_topic_field_documents_the_naming_decision() -> None:
    prop = PLUGINS["stream-logger"].json_schema()["properties"]["stream_topic"]
    assert "kafka_topic" in prop["description"] and "<broker>_topic" in prop["description"]
