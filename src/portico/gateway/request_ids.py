"""The ids the gateway gives requests that come without a usable one of their own, and what
a route's ``request-id`` plugin makes of them (``RequestIdPolicy``: the header they travel
in, whether the client gets it back, how a new one is made)."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from portico.gateway.http.server import Request, Responder

#: an incoming id is kept when it is this (anything else could forge log lines or headers)
VALID_ID: Final = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
#: (a Final alias: see CONVENTIONS.md "Compiled modules")
_valid: Final = VALID_ID.match
#: the gateway's own header (lower-case, as the engine's names are)
STANDARD_HEADER: Final = "x-request-id"
_VARIANTS: Final = "89ab"


class RequestIds:
    """Random request ids (32 hex digits) drawn from the kernel's generator 256 at a time: one
    getrandom() system call per request cost more than the rest of making the id."""

    __slots__ = ("_at", "_text")

    BATCH: Final = 256

    def __init__(self) -> None:
        self._text = ""  # (filled on first use: a process forked before then draws its own)
        self._at = 0

    def next(self) -> str:
        at = self._at
        if at >= len(self._text):
            self._text = os.urandom(16 * self.BATCH).hex()
            at = 0
        self._at = at + 32
        return self._text[at : at + 32]

    def uuid(self) -> str:
        """A random (version 4) UUID in its 36-character form, from the same draws."""
        hexa = self.next()
        parts = [hexa[:8], "-", hexa[8:12], "-4", hexa[13:16], "-"]
        parts.append(_VARIANTS[int(hexa[16], 16) & 3])
        parts += (hexa[17:20], "-", hexa[20:])
        return "".join(parts)


class RangeIds:
    """Ids of ``length`` characters drawn from ``alphabet`` (the seed's ``range_id``), from
    random bytes drawn in batches. Each character is ``alphabet[byte % size]``: for an
    alphabet whose size does not divide 256 a slight bias, harmless for an id that only has
    to be unique, not secret."""

    __slots__ = ("_alphabet", "_at", "_bytes", "_length")

    BATCH: Final = 64

    def __init__(self, alphabet: str, length: int) -> None:
        self._alphabet = alphabet
        self._length = length
        self._bytes = b""
        self._at = 0

    def next(self) -> str:
        length = self._length
        at = self._at
        if at + length > len(self._bytes):
            self._bytes = os.urandom(length * self.BATCH)
            at = 0
        self._at = at + length
        alphabet = self._alphabet
        size = len(alphabet)
        chars = [alphabet[byte % size] for byte in self._bytes[at : at + length]]
        return "".join(chars)


class RequestIdPolicy:
    """What a route's ``request-id`` plugin says of its requests' ids: read from ``header``
    (lower-case) when the client sent a valid one, else made by the algorithm (a UUID, or a
    ``RangeIds`` id); sent upstream in ``header`` and, with ``in_response``, back to the
    client. The one id of the request: the one its log entries, traces and the upstream see.
    """

    __slots__ = ("header", "in_response", "range_ids", "standard", "uuids")

    def __init__(
        self, header: str, in_response: bool, range_ids: RangeIds | None, uuids: RequestIds
    ) -> None:
        self.header = header.lower()
        self.standard = self.header == STANDARD_HEADER  # (parsed with the head already)
        self.in_response = in_response
        self.range_ids = range_ids
        self.uuids = uuids

    def assign(self, request: Request, responder: Responder) -> str:
        """The request's id, set as the responder's tag (or none, without ``in_response``)."""
        incoming = request.request_id if self.standard else request.header(self.header)
        if incoming and _valid(incoming):
            request_id = incoming
        elif self.range_ids is not None:
            request_id = self.range_ids.next()
        else:
            request_id = self.uuids.uuid()
        responder.tag = (self.header, request_id) if self.in_response else None
        return request_id
