"""ai-prompt-guard's patterns on ASCII text: where the runtime runs a pattern compiled with
``re.ASCII`` (cheaper), it finds exactly what the pattern as configured finds; where that could
differ, the pattern as configured runs."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from portico.gateway.plugins.ai_prompt_guard.runtime import ascii_search

# pieces whose meaning or case folding could differ between Unicode and ASCII matching
pieces = st.sampled_from(
    [
        "\\b", "\\B", "\\d", "\\D", "\\w", "\\W", "\\s", "\\S", "[a-z]", "[Z-a]", "[^k]", "[\\w-]",
        "k", "K", "s", "S", "i", "I", "ß", "ſ", "\u212a", "\\u017f", "\\x4b", "\\N{KELVIN SIGN}",
        "\\101", "(ab|cd)", "\\1", ".", "+", "*", "?", "{2}", " ", "_", "9", "-", "(?u)", "(?a)",
    ]
)  # fmt: skip
patterns = st.builds(
    lambda flags, body: flags + "".join(body),
    st.sampled_from(["", "(?i)", "(?x)", "(?is)"]),
    st.lists(pieces, min_size=1, max_size=6),
)
# ASCII, with the characters those pieces are about more often than at random
ascii_texts = st.text(
    alphabet=st.sampled_from("kKsSiIab9_- \t\x1c\x1f") | st.characters(max_codepoint=127),
    max_size=24,
)


def found(search: object, text: str) -> tuple[int, int] | None:
    match = search(text)  # type: ignore[operator]
    return None if match is None else match.span()


@given(patterns, ascii_texts)
def test_on_ascii_text_the_search_run_finds_what_the_configured_pattern_finds(
    pattern: str, text: str
) -> None:
    try:
        configured = re.compile(pattern).search
    except (re.error, ValueError):  # ("(?u)(?a)": incompatible flags)
        return  # (the config refuses it)
    assert found(ascii_search(pattern, configured), text) == found(configured, text)


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("(?i)ſ", "S"),  # LATIN SMALL LETTER LONG S folds to s
        ("(?i)\\u017f", "s"),  # the same, escaped
        ("(?i)\\N{KELVIN SIGN}", "k"),
        ("\\s", "a\x1cb"),  # Unicode whitespace includes \x1c-\x1f
        ("(?u)\\w", "a"),  # incompatible with re.ASCII
    ],
)
def test_patterns_that_could_differ_run_as_configured(pattern: str, text: str) -> None:
    configured = re.compile(pattern).search
    assert ascii_search(pattern, configured) is configured
    assert configured(text) is not None


def test_a_plain_pattern_runs_compiled_for_ascii() -> None:
    configured = re.compile("(?i)\\bignore (all )?previous\\b").search
    searched = ascii_search("(?i)\\bignore (all )?previous\\b", configured)
    assert searched is not configured
    assert found(searched, "Please IGNORE previous orders") == (7, 22)
