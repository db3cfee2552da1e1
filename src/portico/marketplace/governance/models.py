"""A linting run as stored: the three scores and the overall one, the counts per category
and severity, the ruleset it ran with, the document's hash and the findings."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, Enum, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base, IdMixin
from portico.core.db.types import UTCDateTime, json_type


class LintTrigger(enum.StrEnum):
    #: the API was published (the editorial transition to published)
    PUBLISH = "publish"
    #: a new revision of a published API was imported from its gateway connection
    IMPORT = "import"


class GovernanceRun(IdMixin, Base):
    __tablename__ = "governance_runs"
    __table_args__ = (
        # an API's history, newest first, and its latest run
        Index("ix_governance_runs_node_created", "node_id", "created_at", "id"),
    )

    node_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("catalogue_nodes.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    trigger: Mapped[LintTrigger] = mapped_column(
        Enum(
            LintTrigger,
            native_enum=False,
            length=16,
            values_callable=lambda e: [m.value for m in e],
        )
    )
    ruleset_version: Mapped[str] = mapped_column(String(32))
    #: the rule ids that were switched off for this run
    disabled_rules: Mapped[list[str]] = mapped_column(json_type(), default=list)
    #: SHA-256 of the document's canonical JSON; None when the API had no document
    document_hash: Mapped[str | None] = mapped_column(String(64), default=None)
    valid: Mapped[bool] = mapped_column(Boolean)
    score_overall: Mapped[int] = mapped_column(Integer)
    score_security: Mapped[int] = mapped_column(Integer)
    score_style: Mapped[int] = mapped_column(Integer)
    score_documentation: Mapped[int] = mapped_column(Integer)
    #: {category: {error, warning, info}}
    counts: Mapped[dict[str, Any]] = mapped_column(json_type(), default=dict)
    #: [{rule, category, severity, pointer, message, fix}], at most linter.MAX_FINDINGS
    findings: Mapped[list[Any]] = mapped_column(json_type(), default=list)
    #: how many findings there were (more than kept when the list was cut)
    findings_total: Mapped[int] = mapped_column(Integer, default=0)
