"""The management service's list shape: ``{items, page, size, total}``."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from portico.core.pagination import Page

T = TypeVar("T", bound=BaseModel)


class PageRead(BaseModel, Generic[T]):
    items: list[T]
    page: int
    size: int
    total: int


def page_of(page: Page[Any], schema: type[T]) -> PageRead[T]:
    return PageRead[schema](  # type: ignore[valid-type]
        items=[schema.model_validate(item) for item in page.items],
        page=page.page,
        size=page.size,
        total=page.total,
    )
