"""The AI plugins' JSON shortcuts give exactly what the json module gives: ``replace_body``'s
encoding is ``json.dumps``' (compact, not ASCII-only), ai-prompt-template's body encoded around
pre-encoded pieces is byte for byte that encoding, and the chat body is parsed (or refused) as
``json.loads`` parses (or refuses) it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from portico.gateway.plugins._ai_chat import _encode, _loads
from portico.gateway.plugins.ai_prompt_template.config import TemplateBody
from portico.gateway.plugins.ai_prompt_template.runtime import CompiledTemplate

# quotes, backslashes, control characters, non-ASCII, surrogates: what JSON must escape or keep
texts = st.text(
    alphabet=st.characters(codec=None, categories=None) | st.sampled_from('"\\\n\t\x00\x7f/é€😀'),
    max_size=30,
).filter(lambda text: "{{" not in text)
# a template is configuration, checked by its model, which refuses lone surrogates: only what
# a request fills in may hold one
configured = texts.filter(lambda text: not any("\ud800" <= c <= "\udfff" for c in text))


def reference(template: CompiledTemplate, contents: list[str], stream: bool | None) -> bytes:
    """What ``replace_body`` sends for the filled template."""
    filled: dict[str, Any] = {
        "model": template.model,
        "messages": [
            {"role": role, "content": content}
            for (role, _), content in zip(template.messages, contents, strict=True)
        ],
    }
    if stream is not None:
        filled["stream"] = stream
    return json.dumps(filled, ensure_ascii=False, separators=(",", ":")).encode()


def outcome(encode: Callable[[], bytes]) -> bytes | type[Exception]:
    """The bytes, or the kind of error (a lone surrogate cannot be encoded as UTF-8)."""
    try:
        return encode()
    except UnicodeEncodeError:
        return UnicodeEncodeError


@given(
    model=configured.filter(bool),
    literal=configured.filter(bool),
    values=st.lists(texts, min_size=2, max_size=2),
    stream=st.sampled_from([None, True, False]),
)
def test_the_template_body_is_what_json_dumps_writes(
    model: str, literal: str, values: list[str], stream: bool | None
) -> None:
    body = TemplateBody.model_validate(
        {
            "model": model,
            "messages": [
                {"role": "system", "content": literal},
                {"role": "user", "content": literal + "{{a}} and {{ b }}" + literal},
            ],
        }
    )
    template = CompiledTemplate(body)
    contents = [text.fill({"a": values[0], "b": values[1]}) for _, text in template.messages]
    assert outcome(lambda: template.encoded(contents, stream)) == outcome(
        lambda: reference(template, contents, stream)
    )


@given(st.binary(max_size=40) | st.builds(lambda v: json.dumps(v).encode(), st.text()))
def test_chat_bodies_parse_as_json_loads_parses_them(raw: bytes) -> None:
    raw = raw or b"{}"
    try:
        expected: object = json.loads(raw)
    except ValueError as error:
        expected = type(error)
    try:
        got: object = _loads(raw)
    except ValueError as error:
        got = type(error)
    assert got == expected or (got != got and expected != expected)  # NaN


def test_chat_bodies_in_any_encoding_json_loads_accepts() -> None:
    chat = {"messages": [{"role": "user", "content": "olá \ud800"}]}
    text = json.dumps(chat, ensure_ascii=False)
    for encoding in ("utf-8", "utf-8-sig", "utf-16-le", "utf-16-be", "utf-16", "utf-32"):
        assert _loads(text.encode(encoding, "surrogatepass")) == chat


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(texts, json_values, max_size=5))
def test_the_chat_body_is_encoded_as_json_dumps_encodes_it(chat: dict[str, Any]) -> None:
    assert _encode(chat) == json.dumps(chat, ensure_ascii=False, separators=(",", ":"))


# what a plugin could put in besides parsed JSON: keys JSON writes as strings, tuples
keys = st.none() | st.booleans() | st.integers() | st.floats() | texts
odd_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda inner: st.lists(inner, max_size=3).map(tuple) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=12,
)


@given(st.dictionaries(texts, odd_values, max_size=4))
def test_keys_that_are_not_strings_and_tuples_are_encoded_as_json_dumps_encodes_them(
    chat: dict[str, Any],
) -> None:
    assert _encode(chat) == json.dumps(chat, ensure_ascii=False, separators=(",", ":"))


def test_what_json_cannot_encode_is_refused_as_json_dumps_refuses_it() -> None:
    for value in ({"a": object()}, {"a": b"bytes"}, {(1, 2): 1}):
        try:
            json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except TypeError as error:
            expected = str(error)
        try:
            _encode(value)  # type: ignore[arg-type]
        except TypeError as error:
            got = str(error)
        assert got == expected


@given(
    st.dictionaries(texts, json_values, max_size=4),
    st.sampled_from(["", " ", "\n\t ", "x", "}", " 1", "{}", "\x00", ",", "\u2028"]),
)
def test_object_bodies_with_anything_after_them_parse_as_json_loads_parses_them(
    chat: dict[str, Any], tail: str
) -> None:
    raw = (json.dumps(chat, ensure_ascii=False) + tail).encode("utf-8", "surrogatepass")
    try:
        expected: object = json.loads(raw)
    except ValueError as error:
        expected = (type(error), str(error))
    try:
        got: object = _loads(raw)
    except ValueError as error:
        got = (type(error), str(error))
    assert repr(got) == repr(expected)  # (NaN is not equal to itself; its repr is)
