"""Linting one OpenAPI document: validity, then every rule that is on, then the scores.

Scores, per category, over that category's findings: ``round(100 × exp(−0.1 × (E + 0.5 W +
0.2 I)))`` with E, W, I its errors, warnings and infos; the overall score is the mean of the
three, rounded. Bands: ``good`` ≥ 80, ``fair`` 60–79, ``poor`` 40–59, ``failing`` < 40. A
score is advice: it never blocks publishing.

Pure and CPU-bound (no I/O): the job runs it in a thread.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from portico.marketplace.governance import validity
from portico.marketplace.governance.rules import (
    RULES,
    RULESET_VERSION,
    Category,
    Rule,
    Severity,
)

#: findings kept per run (the counts and scores cover all of them)
MAX_FINDINGS = 500
_WEIGHTS = {Severity.ERROR: 1.0, Severity.WARNING: 0.5, Severity.INFO: 0.2}


class UnknownRules(ValueError):
    pass


@dataclass(frozen=True)
class Finding:
    rule: str
    category: Category
    severity: Severity
    pointer: str
    message: str
    fix: str

    def as_json(self) -> dict[str, str]:
        return {
            "rule": self.rule,
            "category": self.category.value,
            "severity": self.severity.value,
            "pointer": self.pointer,
            "message": self.message,
            "fix": self.fix,
        }


@dataclass(frozen=True)
class Result:
    ruleset_version: str
    disabled_rules: list[str]
    document_hash: str | None
    valid: bool
    scores: dict[Category, int]
    overall: int
    #: per category: {error, warning, info}
    counts: dict[Category, dict[str, int]]
    findings: list[Finding] = field(default_factory=list)
    findings_total: int = 0


def ruleset(disabled: Iterable[str]) -> list[Rule]:
    """The rules that are on; an unknown id among ``disabled`` is refused (a typo would
    otherwise leave a rule on while the operator believes it off)."""
    off = set(disabled)
    unknown = sorted(off - set(RULES))
    if unknown:
        raise UnknownRules(
            f"unknown governance rules {unknown} in "
            f"PORTICO_MARKETPLACE_GOVERNANCE_DISABLED_RULES; known: {sorted(RULES)}"
        )
    return [rule for rule in RULES.values() if rule.id not in off]


def document_hash(document: Mapping[str, Any]) -> str:
    """SHA-256 of the document's canonical JSON: the same document, however its keys were
    ordered when stored, has one hash."""
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def lint(document: Mapping[str, Any] | None, *, disabled: Iterable[str] = ()) -> Result:
    rules = ruleset(disabled)
    on = {rule.id: rule for rule in rules}
    findings: list[Finding] = []

    def note(rule_id: str, hits: Iterable[tuple[str, str]]) -> None:
        rule = on.get(rule_id)
        if rule is not None:
            findings.extend(
                Finding(rule.id, rule.category, rule.severity, at, message, rule.fix)
                for at, message in hits
            )

    if document is None:
        note("doc-missing", [("", "the API has no OpenAPI document")])
        return _result(findings, disabled, None, valid=False)
    problems = validity.errors(document)
    note("doc-valid", problems)
    for rule in rules:
        if rule.check is not None:
            note(rule.id, rule.check(document))
    return _result(findings, disabled, document_hash(document), valid=not problems)


def category_score(counts: Mapping[str, int]) -> int:
    penalty = sum(_WEIGHTS[severity] * counts.get(severity.value, 0) for severity in Severity)
    return round(100 * math.exp(-0.1 * penalty))


def band(score: int) -> str:
    if score >= 80:
        return "good"
    if score >= 60:
        return "fair"
    if score >= 40:
        return "poor"
    return "failing"


def _result(
    findings: list[Finding], disabled: Iterable[str], digest: str | None, *, valid: bool
) -> Result:
    counts = {c: {s.value: 0 for s in Severity} for c in Category}
    for finding in findings:
        counts[finding.category][finding.severity.value] += 1
    scores = {c: category_score(counts[c]) for c in Category}
    return Result(
        ruleset_version=RULESET_VERSION,
        disabled_rules=sorted(set(disabled)),
        document_hash=digest,
        valid=valid,
        scores=scores,
        overall=round(sum(scores.values()) / len(scores)),
        counts=counts,
        findings=findings[:MAX_FINDINGS],
        findings_total=len(findings),
    )
