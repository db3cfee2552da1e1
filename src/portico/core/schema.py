"""Base classes for HTTP schemas.

The management service speaks camelCase JSON (its clients read ``gatewayHosts``,
``upstreamBindings``); Python code uses snake_case. Request schemas are strict: a string is
not an integer, and an unknown field is an error rather than silently dropped.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from portico.core.validation import Loc, invalid

_CONTROL = frozenset(chr(c) for c in (*range(0x20), 0x7F))
_LINE_BREAKS = frozenset("\t\n\r")


def no_control_characters(value: str) -> str:
    if any(c in _CONTROL for c in value):
        raise ValueError("must not contain control characters")
    return value


def plain_text(value: str) -> str:
    """Free text for people: line breaks and tabs are text, other control characters noise
    (and PostgreSQL text cannot hold NUL)."""
    if any(c in _CONTROL and c not in _LINE_BREAKS for c in value):
        raise ValueError("must not contain control characters other than tab and line breaks")
    return value


#: a resource's name as people type and read it: no surrounding blanks, no control characters
ResourceName = Annotated[
    str,
    Field(min_length=1, max_length=100, pattern=r"^\S(.*\S)?$"),
    AfterValidator(no_control_characters),
]


class ReadSchema(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        serialize_by_alias=True,
        from_attributes=True,
    )


class WriteSchema(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=False,
        extra="forbid",
        strict=True,
        str_strip_whitespace=False,
    )

    @model_validator(mode="before")
    @classmethod
    def _refuse_nul(cls, data: Any) -> Any:
        """No stored text may hold NUL: PostgreSQL refuses it in text and jsonb (an error at
        write time, a 500 if it got that far). Checked once, on the raw document, at any
        depth, so that no field of any schema needs to remember it."""
        found = find_nul(data)
        if found is not None:
            invalid(found, NUL_REFUSED)
        return data


NUL_REFUSED = "must not contain NUL characters"


def find_nul(data: Any) -> Loc | None:
    """Where ``data`` (a JSON document) holds NUL in a key or a string, if anywhere."""
    return _nul_at(data, ())


def _nul_at(value: Any, loc: Loc) -> Loc | None:
    if isinstance(value, str):
        return loc if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            here = (*loc, str(key))
            if "\x00" in str(key):
                return here
            found = _nul_at(item, here)
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _nul_at(item, (*loc, index))
            if found is not None:
                return found
    return None


class PlainReadSchema(BaseModel):
    """The marketplace admin API speaks snake_case JSON (``job_id``, ``id_token``)."""

    model_config = ConfigDict(from_attributes=True)


class PlainWriteSchema(BaseModel):
    """Strict request bodies of the marketplace admin API, snake_case."""

    model_config = ConfigDict(extra="forbid", strict=True, str_strip_whitespace=False)

    @model_validator(mode="before")
    @classmethod
    def _refuse_nul(cls, data: Any) -> Any:
        found = find_nul(data)
        if found is not None:
            invalid(found, NUL_REFUSED)
        return data
