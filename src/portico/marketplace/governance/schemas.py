"""HTTP shapes of governance (snake_case, read only)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import Field

from portico.core.schema import PlainReadSchema
from portico.marketplace.governance.linter import band
from portico.marketplace.governance.models import GovernanceRun, LintTrigger
from portico.marketplace.governance.rules import Category, Severity
from portico.marketplace.node.models import CatalogueNode


class ApiRef(PlainReadSchema):
    id: uuid.UUID
    title: str
    version: str
    organisation: uuid.UUID | None = Field(description="The owning portal organisation's id.")
    published: bool

    @classmethod
    def of(cls, node: CatalogueNode) -> ApiRef:
        return cls(
            id=node.id,
            title=node.title,
            version=node.version,
            organisation=node.organisation_id,
            published=node.published,
        )


class Scores(PlainReadSchema):
    overall: int = Field(ge=0, le=100, description="The mean of the three category scores.")
    band: str = Field(
        description="good (≥ 80), fair (60–79), poor (40–59) or failing (< 40): advice only, "
        "a score never blocks publishing."
    )
    security: int = Field(ge=0, le=100)
    style: int = Field(ge=0, le=100)
    documentation: int = Field(ge=0, le=100)


class SeverityCounts(PlainReadSchema):
    error: int
    warning: int
    info: int


class Counts(PlainReadSchema):
    security: SeverityCounts
    style: SeverityCounts
    documentation: SeverityCounts


class FindingRead(PlainReadSchema):
    rule: str = Field(description="The rule's id (switched off by naming it in settings).")
    category: Category
    severity: Severity
    pointer: str = Field(description="JSON pointer (RFC 6901) into the OpenAPI document.")
    message: str
    fix: str = Field(description="What to change.")


class RunSummary(PlainReadSchema):
    id: uuid.UUID
    api: uuid.UUID = Field(description="The API node linted.")
    linted_at: datetime
    trigger: LintTrigger = Field(
        description="publish (the API was published) or import (a new imported revision)."
    )
    ruleset_version: str
    disabled_rules: list[str] = Field(description="The rules switched off for this run.")
    document_hash: str | None = Field(
        description="SHA-256 of the document's canonical JSON; null when it had none."
    )
    valid: bool = Field(description="Whether the document is valid OpenAPI.")
    scores: Scores
    counts: Counts
    findings_total: int = Field(description="How many findings the run made.")

    @classmethod
    def fields_of(cls, run: GovernanceRun) -> dict[str, Any]:
        return {
            "id": run.id,
            "api": run.node_id,
            "linted_at": run.created_at,
            "trigger": run.trigger,
            "ruleset_version": run.ruleset_version,
            "disabled_rules": list(run.disabled_rules),
            "document_hash": run.document_hash,
            "valid": run.valid,
            "scores": Scores(
                overall=run.score_overall,
                band=band(run.score_overall),
                security=run.score_security,
                style=run.score_style,
                documentation=run.score_documentation,
            ),
            "counts": Counts.model_validate(run.counts),
            "findings_total": run.findings_total,
        }

    @classmethod
    def of(cls, run: GovernanceRun) -> RunSummary:
        return cls(**cls.fields_of(run))


class RunRead(RunSummary):
    findings: list[FindingRead] = Field(
        description="Errors first, then warnings, then infos; at most 500 (findings_total "
        "counts them all)."
    )

    @classmethod
    def of(cls, run: GovernanceRun) -> RunRead:
        order = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
        findings = sorted(
            (FindingRead.model_validate(f) for f in run.findings),
            key=lambda f: order[f.severity],
        )
        return cls(**RunSummary.fields_of(run), findings=findings)


class GovernanceRow(PlainReadSchema):
    api: ApiRef
    latest_run: RunSummary | None = Field(description="Null until the API's first run.")


class GovernanceDetail(PlainReadSchema):
    api: ApiRef
    latest_run: RunRead | None = Field(description="Null until the API's first run.")
