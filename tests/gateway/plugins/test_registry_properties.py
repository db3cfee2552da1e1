"""Any JSON value given as any plugin's configuration is accepted or refused with a
PluginCheckError — never another exception — and the reason is a non-empty sentence."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from portico.gateway.plugins import registry
from portico.gateway.plugins.registry import PLUGINS, PluginCheckError, check_plugin

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)  # JSON has neither
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)


@st.composite
def configs(draw: st.DrawFn) -> tuple[str, Any]:
    """A plugin name and a config built from that plugin's real property names (so the
    search reaches past 'unknown property'), or an arbitrary JSON value."""
    name = draw(st.sampled_from(sorted(PLUGINS)))
    properties = sorted(PLUGINS[name].json_schema().get("properties", {}))
    if not properties or draw(st.booleans()):
        return name, draw(json_values)
    keys = draw(st.lists(st.sampled_from(properties), max_size=len(properties), unique=True))
    return name, {key: draw(json_values) for key in keys}


@settings(max_examples=400, deadline=None)
@given(configs())
def test_any_config_is_accepted_or_refused_cleanly(case: tuple[str, Any]) -> None:
    name, raw = case
    try:
        spec, config = check_plugin(name, raw)
    except PluginCheckError as error:
        refused: PluginCheckError | None = error
    else:
        refused = None
        assert spec.name == name
        # what is accepted round-trips: the runtime reloads the stored (dumped) form
        dumped = config.model_dump(mode="json", by_alias=True, exclude_none=True)
        check_plugin(name, dumped)
    if refused is not None:
        assert refused.reason
        assert refused.message.startswith(f"failed to check the configuration of plugin {name}: ")
        assert refused.pointer == "" or refused.pointer.startswith("/")


def test_a_plugin_without_a_runtime_is_refused_at_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every listed plugin acts on traffic: one that would land as a schema alone (which a
    deploy would have to refuse and a gateway answer 503 for) stops the registry loading."""
    schema_only = dataclasses.replace(PLUGINS["cors"], name="schema-only", runtime=None)
    modules = [SimpleNamespace(PLUGIN=spec) for spec in (*PLUGINS.values(), schema_only)]
    monkeypatch.setattr(registry, "_plugin_modules", lambda: modules)
    with pytest.raises(RuntimeError, match="plugin 'schema-only' has no runtime"):
        registry._collect()
    monkeypatch.setattr(registry, "_plugin_modules", lambda: modules[:-1])
    assert list(registry._collect()) == list(PLUGINS)
