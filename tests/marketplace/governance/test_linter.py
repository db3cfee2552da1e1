"""The linter on documents whose results are known: exact findings, counts and scores by
the contract's formula, rules switched off, and the validator's limits (no reference
fetched, no document kept)."""

from __future__ import annotations

import copy
import math

import pytest

from portico.marketplace.governance import linter
from portico.marketplace.governance.rules import RULES, Category
from tests.marketplace.governance.documents import CLEAN, MIXED, MIXED_FINDINGS, MIXED_SCORES


def test_a_clean_document_scores_100_everywhere() -> None:
    result = linter.lint(CLEAN)
    assert result.findings == []
    assert result.valid
    assert result.overall == 100
    assert set(result.scores.values()) == {100}
    assert result.document_hash == linter.document_hash(copy.deepcopy(CLEAN))


def test_known_findings_counts_and_scores() -> None:
    result = linter.lint(MIXED)
    assert {(f.rule, f.pointer) for f in result.findings} == MIXED_FINDINGS
    assert result.findings_total == len(MIXED_FINDINGS)
    assert not result.valid  # the validator: operationIds must be unique
    assert {c.value: s for c, s in result.scores.items()} | {"overall": result.overall} == (
        MIXED_SCORES
    )
    assert result.counts[Category.SECURITY] == {"error": 3, "warning": 5, "info": 1}
    assert result.counts[Category.STYLE] == {"error": 1, "warning": 2, "info": 3}
    assert result.counts[Category.DOCUMENTATION] == {"error": 1, "warning": 3, "info": 2}
    assert linter.band(result.overall) == "fair"
    for finding in result.findings:  # each says what to change
        assert finding.fix == RULES[finding.rule].fix
        assert finding.severity == RULES[finding.rule].severity


@pytest.mark.parametrize(
    ("errors", "warnings", "infos", "score"),
    [(0, 0, 0, 100), (1, 0, 0, 90), (0, 1, 0, 95), (0, 0, 1, 98), (10, 0, 0, 37), (3, 5, 1, 57)],
)
def test_the_formula(errors: int, warnings: int, infos: int, score: int) -> None:
    counts = {"error": errors, "warning": warnings, "info": infos}
    assert linter.category_score(counts) == score
    assert score == round(100 * math.exp(-0.1 * (errors + 0.5 * warnings + 0.2 * infos)))


@pytest.mark.parametrize(
    ("score", "band"),
    [(100, "good"), (80, "good"), (79, "fair"), (60, "fair"), (59, "poor"), (40, "poor"),
     (39, "failing"), (0, "failing")],
)  # fmt: skip
def test_bands(score: int, band: str) -> None:
    assert linter.band(score) == band


def test_switched_off_rules_find_nothing_and_are_recorded() -> None:
    off = ["security-429-documented", "doc-valid", "style-operation-id-case"]
    result = linter.lint(MIXED, disabled=off)
    assert not {f.rule for f in result.findings} & set(off)
    assert result.disabled_rules == sorted(off)
    # security loses two warnings: E 3, W 3, I 1 → round(100 e^-0.47) = 63
    assert result.scores[Category.SECURITY] == 63


def test_an_unknown_rule_is_refused_rather_than_ignored() -> None:
    with pytest.raises(linter.UnknownRules, match="no-such-rule"):
        linter.lint(CLEAN, disabled=["no-such-rule"])


def test_no_document_is_a_documentation_error() -> None:
    result = linter.lint(None)
    assert [(f.rule, f.pointer) for f in result.findings] == [("doc-missing", "")]
    assert result.document_hash is None
    assert result.scores[Category.DOCUMENTATION] == 90
    assert result.overall == 97


def test_remote_references_are_never_fetched() -> None:
    document = copy.deepcopy(CLEAN)
    document["components"]["schemas"]["Pet"] = {"$ref": "http://169.254.169.254/latest"}
    result = linter.lint(document)
    valid = [f for f in result.findings if f.rule == "doc-valid"]
    assert valid and "Unresolvable" in valid[0].message
    assert not result.valid


def test_not_openapi_3() -> None:
    result = linter.lint({"swagger": "2.0", "info": {"title": "x", "version": "1"}})
    assert ("doc-valid", "/openapi") in {(f.rule, f.pointer) for f in result.findings}


def test_the_validator_keeps_no_document() -> None:
    from openapi_spec_validator.validation.validators import SpecValidator

    linter.lint(MIXED)
    cache = SpecValidator.iter_errors.__wrapped__  # type: ignore[attr-defined]
    assert cache.cache_info().currsize == 0


def test_findings_are_capped_but_counted() -> None:
    document = copy.deepcopy(CLEAN)
    properties = {f"p{i}": {"type": "string"} for i in range(600)}
    document["components"]["schemas"]["Pet"]["properties"] = properties
    result = linter.lint(document)
    assert result.findings_total == 600
    assert len(result.findings) == linter.MAX_FINDINGS
    assert result.scores[Category.SECURITY] == 0
