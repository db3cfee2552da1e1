"""The directory side of ldap-auth: DNs built safely from what a client typed, and one simple
bind with ldap3 (blocking: the runtime calls :func:`bind` in a worker thread).

ldap3 is imported inside :meth:`Directory.bind`, on the first bind: it costs ~0.3 s to import, and a
gateway (or a management process validating configs) that never binds should not pay it.
"""

from __future__ import annotations

import contextlib
import re
import ssl
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import ldap3

#: seconds to connect, and to wait for each answer (TLS handshake, StartTLS, bind); whole
#: seconds: ldap3 packs the receive timeout into SO_RCVTIMEO as an integer
TIMEOUT = 5

#: bind result codes that mean "these credentials do not authenticate" (RFC 4511 §4.1.9):
#: invalidCredentials, noSuchObject, invalidDNSyntax, inappropriateAuthentication,
#: insufficientAccessRights, unwillingToPerform. Any other failure is the directory's.
REFUSED_CODES = frozenset({49, 32, 34, 48, 50, 53})

# RFC 4514 §2.4: escaped wherever they occur; "=" too, which some servers misparse
_SPECIAL = frozenset('\\,+"<>;=')
_HEX_ESCAPE = re.compile(r"\\([0-9A-Fa-f]{2})")


class DirectoryUnavailable(Exception):
    """The directory could not say yes or no (unreachable, TLS failure, timeout, busy)."""


@dataclass(frozen=True)
class Endpoint:
    """Where and how to bind, from ``ldap_uri``, ``use_tls`` and ``tls_verify``."""

    hostname: str
    port: int
    ldaps: bool  # TLS from the first byte
    start_tls: bool  # TLS negotiated on the plain connection before the bind
    verify: bool

    @classmethod
    def of(cls, ldap_uri: str, use_tls: bool, tls_verify: bool) -> Endpoint:
        parts = urlsplit(ldap_uri)  # validated by the config model
        ldaps = parts.scheme == "ldaps"
        assert parts.hostname is not None
        return cls(
            hostname=parts.hostname,
            port=parts.port or (636 if ldaps else 389),
            ldaps=ldaps,
            start_tls=use_tls and not ldaps,
            verify=tls_verify,
        )


def escape_dn_value(value: str) -> str:
    """``value`` as an RFC 4514 attribute value: the special characters backslash-escaped,
    control characters (NUL included) hex-escaped, a leading ``#`` or space and a trailing
    space escaped. Whatever a client types then stays one value of one RDN: no comma or plus
    can add an RDN or move the bind elsewhere in the tree (DN injection)."""
    out = []
    for char in value:
        if char in _SPECIAL:
            out.append("\\" + char)
        elif ord(char) < 0x20 or char == "\x7f":
            out.append(f"\\{ord(char):02x}")
        else:
            out.append(char)
    escaped = "".join(out)
    if escaped.startswith(("#", " ")):
        escaped = "\\" + escaped
    if escaped.endswith(" ") and not escaped.endswith("\\ "):
        escaped = escaped[:-1] + "\\ "
    return escaped


def user_dn(uid: str, username: str, base_dn: str) -> str:
    return f"{uid}={escape_dn_value(username)},{base_dn}"


def canonical_dn(dn: str) -> str:
    """A form of ``dn`` in which equal DNs are equal strings, to match the DN a user binds as
    with the one a consumer's credential holds: attribute names and values lower-cased (the
    naming attributes, cn, uid, ou, dc, match case-insensitively), spaces around separators
    dropped, escapes rewritten one way (``\\2C`` and ``\\,`` alike)."""
    rdns = []
    for rdn in _split(dn, ","):
        assertions = []
        for assertion in _split(rdn, "+"):
            attribute, _, value = assertion.partition("=")
            raw = _unescape(value.strip())
            assertions.append(f"{attribute.strip().lower()}={escape_dn_value(raw).lower()}")
        rdns.append("+".join(sorted(assertions)))
    return ",".join(rdns)


def _split(text: str, separator: str) -> list[str]:
    """``text`` split at the ``separator`` characters that are not escaped."""
    parts, current, escaped = [], [], False
    for char in text:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            current.append(char)
            escaped = True
        elif char == separator:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _unescape(value: str) -> str:
    # hex escapes first (as bytes: a UTF-8 character may be escaped byte by byte)
    if "\\" not in value:
        return value
    raw = bytearray()
    i = 0
    while i < len(value):
        if value[i] == "\\" and _HEX_ESCAPE.match(value, i):
            raw.append(int(value[i + 1 : i + 3], 16))
            i += 3
        elif value[i] == "\\" and i + 1 < len(value):
            raw += value[i + 1].encode()
            i += 2
        else:
            raw += value[i].encode()
            i += 1
    return raw.decode(errors="replace")


class Directory:
    """One attachment's directory: where and how to bind, and the TLS context for it, made on
    the first bind in the worker thread (loading the trusted CAs takes ~0.1 s) and reused."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self._context: ssl.SSLContext | None = None
        self._lock = threading.Lock()

    def tls_context(self) -> ssl.SSLContext:
        with self._lock:
            if self._context is None:
                self._context = _tls_context(self.endpoint.verify)
            return self._context

    def bind(self, address: str, dn: str, password: str) -> bool:
        """Whether ``dn`` binds with ``password`` on the directory at ``address`` (the
        address the SSRF guard checked; ``endpoint.hostname`` is what its certificate must
        name). Raises :class:`DirectoryUnavailable` when the directory cannot answer.
        Blocking: called in a worker thread."""
        import ldap3

        endpoint = self.endpoint
        tls = _pinned_tls(self.tls_context(), endpoint.hostname) if _uses_tls(endpoint) else None
        server = ldap3.Server(
            address,
            port=endpoint.port,
            use_ssl=endpoint.ldaps,
            tls=tls,
            get_info=ldap3.NONE,
            connect_timeout=TIMEOUT,
        )
        connection = ldap3.Connection(
            server,
            user=dn,
            password=password,
            authentication=ldap3.SIMPLE,
            receive_timeout=TIMEOUT,
            raise_exceptions=False,
            read_only=True,
            auto_referrals=False,
        )
        try:
            connection.open()
            if endpoint.start_tls and not connection.start_tls():
                raise DirectoryUnavailable("the directory refused StartTLS")
            if connection.bind():
                return True
            result = connection.result or {}
            code = result.get("result")
            if code in REFUSED_CODES:
                return False
            raise DirectoryUnavailable(f"bind failed: {code} {result.get('description', '')}")
        except DirectoryUnavailable:
            raise
        except Exception as error:  # ldap3's own, ssl.SSLError, OSError...
            # whatever goes wrong talking to the directory, the client gets 503, never a 500
            raise DirectoryUnavailable(f"{type(error).__name__}: {error}") from None
        finally:
            with contextlib.suppress(Exception):  # closing a connection that failed
                connection.unbind()


def _uses_tls(endpoint: Endpoint) -> bool:
    return endpoint.ldaps or endpoint.start_tls


def _tls_context(verify: bool) -> ssl.SSLContext:
    """The platform's trusted CAs and host-name check (``tls_verify``), or no check at all."""
    context = ssl.create_default_context()
    if not verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def _pinned_tls(context: ssl.SSLContext, hostname: str) -> ldap3.Tls:
    """ldap3's TLS settings, wrapping sockets with ``context`` for ``hostname`` (as the TLS
    server name, and the name the certificate must hold) although the connection goes to
    the address the SSRF guard checked. ldap3's own check would compare the certificate with
    that address, through ``ssl.match_hostname``, which Python 3.12 removed."""
    import ldap3

    class PinnedTls(ldap3.Tls):
        def wrap_socket(self, connection: Any, do_handshake: bool = False) -> None:
            connection.socket = context.wrap_socket(
                connection.socket,
                server_side=False,
                do_handshake_on_connect=do_handshake,
                server_hostname=hostname,
            )

    return PinnedTls()
