"""HTTP shapes of the content endpoints (snake_case): a node with the transitions its caller
may apply, and the pages written here."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated

from pydantic import AfterValidator, Field

from portico.core.schema import PlainReadSchema, PlainWriteSchema, no_control_characters, plain_text
from portico.marketplace.node.models import Bundle, CatalogueNode, ModerationState
from portico.marketplace.node.moderation import Transition
from portico.marketplace.node.schemas import NodeSummary, summary_fields

MAX_BODY = 100_000
# The rules spelled out as character classes, for the OpenAPI document as much as for the
# check: ``\s`` and ``.`` differ between pydantic's regexes and JSON Schema's (ECMA-262).
_CONTROL = r"\x00-\x1f\x7f"
_SPACE = r"\x09-\x0d\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
#: no control character; neither starts nor ends with a blank
TITLE_PATTERN = rf"^[^{_CONTROL}{_SPACE}](?:[^{_CONTROL}]*[^{_CONTROL}{_SPACE}])?$"
#: text for people: tabs and line breaks, no other control character
BODY_PATTERN = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$"

Title = Annotated[
    str,
    Field(min_length=1, max_length=255, pattern=TITLE_PATTERN),
    AfterValidator(no_control_characters),
]
Body = Annotated[str, Field(max_length=MAX_BODY, pattern=BODY_PATTERN), AfterValidator(plain_text)]


class TransitionRead(PlainReadSchema):
    id: str = Field(description="What POST .../transitions/{transition} takes.")
    label: str
    target: ModerationState = Field(description="The state the node moves to.")
    permission: str = Field(description="The permission that applying it needs.")

    @classmethod
    def of(cls, transition: Transition) -> TransitionRead:
        return cls(
            id=transition.id,
            label=transition.label,
            target=transition.target,
            permission=transition.permission,
        )


class ContentNode(NodeSummary):
    body: str | None = Field(
        description="A page's body (Markdown); null for APIs and products, whose fields are "
        "read at /apis/{node} and /products/{node}."
    )
    transitions: list[TransitionRead] = Field(
        description="The transitions the caller may apply now (none for pages, which are "
        "published and unpublished instead)."
    )

    @classmethod
    def of_node(cls, node: CatalogueNode, transitions: Iterable[Transition]) -> ContentNode:
        return cls(
            **summary_fields(node),
            body=node.description if node.bundle is Bundle.PAGE else None,
            transitions=[TransitionRead.of(t) for t in transitions],
        )


class PageCreate(PlainWriteSchema):
    title: Title
    body: Body = Field("", description="Markdown.")


class PageUpdate(PlainWriteSchema):
    """Only the members given change (absent or null: unchanged)."""

    title: Title | None = Field(None, description="A new title.")
    body: Body | None = Field(None, description="A new body (Markdown).")
