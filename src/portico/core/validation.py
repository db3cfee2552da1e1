"""Validation errors in one voice.

pydantic reports failures as ``{type, loc, msg, ctx}``; clients of Portico read them as
``{pointer, detail}`` pairs whose wording follows the JSON-schema validator messages the
seed quotes (``$.script: must be at least 10 characters long``,
``required property 'plugins' not found``). This module is the only place that wording lives.

Cross-field checks in models call :func:`invalid`, which raises a pydantic
``ValidationError`` located at the offending field, so that the pointer names that field
and not the object holding it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NoReturn

from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

Loc = Sequence[str | int]

#: patterns that many fields share, said in words: a regular expression tells a person little
_PATTERN_WORDS = {
    r"^\S(.*\S)?$": "must not start or end with a space",
}

_TYPE_NAMES = {
    "int_type": "integer",
    "int_parsing": "integer",
    "int_from_float": "integer",
    "float_type": "number",
    "float_parsing": "number",
    "decimal_type": "number",
    "string_type": "string",
    "bool_type": "boolean",
    "bool_parsing": "boolean",
    "list_type": "array",
    "tuple_type": "array",
    "set_type": "array",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
    "dataclass_type": "object",
    "uuid_type": "UUID string",
    "uuid_parsing": "UUID string",
    "datetime_type": "date-time string",
    "datetime_parsing": "date-time string",
    "datetime_from_date_parsing": "date-time string",
    "none_required": "null",
}


def invalid(loc: Loc, message: str, value: Any = None) -> NoReturn:
    """Fail validation at ``loc`` (relative to the model being validated) with ``message``.

    Used inside ``model_validator`` for rules that span several fields.
    """
    raise ValidationError.from_exception_data(
        "portico",
        [
            InitErrorDetails(
                type=PydanticCustomError("portico", message),
                loc=tuple(loc),
                input=value,
            )
        ],
    )


def json_path(loc: Loc) -> str:
    """``("checks", "active", "port")`` → ``$.checks.active.port``; indices as ``[0]``."""
    out = "$"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def json_pointer(loc: Loc) -> str:
    """RFC 6901 pointer for ``loc``: ``/checks/active/port``."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in loc)


def describe(error: Mapping[str, Any], loc: Loc) -> str:
    """One pydantic error as a client-facing sentence."""
    kind: str = error["type"]
    ctx: Mapping[str, Any] = error.get("ctx") or {}
    path = json_path(loc)
    if kind == "missing":
        return f"required property '{loc[-1] if loc else ''}' not found"
    if kind == "extra_forbidden":
        return f"property '{loc[-1] if loc else ''}' is not allowed"
    if kind == "portico":
        return (
            str(error["msg"])
            if str(error["msg"]).startswith(("$", "required"))
            else (f"{path}: {error['msg']}")
        )
    if kind in _TYPE_NAMES:
        return f"{path}: {_TYPE_NAMES[kind]} expected"
    if kind == "string_too_short":
        return f"{path}: must be at least {ctx.get('min_length')} characters long"
    if kind == "string_too_long":
        return f"{path}: must be at most {ctx.get('max_length')} characters long"
    if kind == "too_short":
        return f"{path}: must have at least {ctx.get('min_length')} items"
    if kind == "too_long":
        return f"{path}: must have at most {ctx.get('max_length')} items"
    if kind == "greater_than_equal":
        return f"{path}: must be greater than or equal to {ctx.get('ge')}"
    if kind == "greater_than":
        return f"{path}: must be greater than {ctx.get('gt')}"
    if kind == "less_than_equal":
        return f"{path}: must be less than or equal to {ctx.get('le')}"
    if kind == "less_than":
        return f"{path}: must be less than {ctx.get('lt')}"
    if kind in ("literal_error", "enum"):
        return f"{path}: must be one of {ctx.get('expected')}"
    if kind == "string_pattern_mismatch":
        pattern = str(ctx.get("pattern"))
        return f"{path}: {_PATTERN_WORDS.get(pattern, f'does not match the pattern {pattern}')}"
    if kind == "value_error":
        reason = str(ctx.get("error") or error.get("msg", "invalid value"))
        return f"{path}: {reason}"
    if kind == "json_invalid":
        return f"malformed JSON: {ctx.get('error', 'invalid document')}"
    if kind == "union_tag_invalid":
        return f"{path}: must be one of {ctx.get('expected_tags')}"
    msg = str(error.get("msg", "invalid value"))
    return f"{path}: {msg[0].lower() + msg[1:] if msg else 'invalid value'}"


def translate(errors: Iterable[Mapping[str, Any]], *, strip: int = 0) -> list[dict[str, str]]:
    """pydantic errors → ``[{"pointer", "detail"}]``.

    ``strip`` drops leading location parts that are framework bookkeeping (FastAPI's ``body``).
    pydantic adds the class name of a union member or a function-validator tag to ``loc``;
    those are not fields of the document and are dropped too.
    """
    out: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for error in errors:
        loc = [p for p in tuple(error.get("loc", ()))[strip:] if not _is_tag(p)]
        item = {"pointer": json_pointer(loc), "detail": describe(error, loc)}
        key = (item["pointer"], item["detail"])
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _is_tag(part: str | int) -> bool:
    return isinstance(part, str) and (
        part.startswith(("function-", "tagged-union[", "lax-or-strict[", "json-or-python["))
        or part in ("str", "int", "list[str]", "dict[str,str]")
    )
