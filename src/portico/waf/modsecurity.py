"""libmodsecurity3 (ModSecurity v3, Debian's ``libmodsecurity3``) through its C API, with ctypes.

Why ctypes: the PyPI bindings (``pymodsecurity`` 0.0.5, the only ones) no longer compile
against libmodsecurity 3.0.9 (their C++ wrappers name members the library removed), and
ctypes needs neither a compiler nor the ``-dev`` package — only the shared library. The C API
used here is small and stable (``msc_*``, ``modsecurity/transaction.h``): every call takes
opaque pointers and C strings, so nothing of the library's C++ layout is mirrored in Python
except the five-field ``ModSecurityIntervention`` struct (``modsecurity/intervention.h``).

A :class:`RuleEngine` holds the parsed rules (read-only once loaded; transactions may run on
several threads at once, and ctypes releases the GIL during each call). One
:meth:`RuleEngine.inspect` is one transaction: connection, URI, headers, body, then the
intervention, if any. The rules that matched are read from the library's log callback
(``[id "942100"]`` in each message), so a block names the rule that detected the attack and
not only CRS's anomaly-score rule that blocked.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

LIBRARY = "libmodsecurity.so.3"
_RULE_ID = re.compile(rb'\[id "(\d+)"\]')


class RuleEngineError(Exception):
    """The library is missing or a rule file does not load; the message says which."""


class _Intervention(ctypes.Structure):
    _fields_ = [
        ("status", ctypes.c_int),
        ("pause", ctypes.c_int),
        ("url", ctypes.c_void_p),
        ("log", ctypes.c_void_p),
        ("disruptive", ctypes.c_int),
    ]


_LogCallback = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


@dataclass
class Verdict:
    """The outcome of one transaction: ``status`` 0 when nothing interrupted it."""

    status: int = 0
    rule_id: str | None = None
    matched: list[str] = field(default_factory=list)

    @property
    def blocked(self) -> bool:
        return self.status != 0


def _load(path: str) -> ctypes.CDLL:
    try:
        lib = ctypes.CDLL(path)
    except OSError as error:
        raise RuleEngineError(
            f"cannot load {path} ({error}); install the libmodsecurity3 package"
        ) from None
    p, s, i = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
    signatures: dict[str, tuple[object, list[object]]] = {
        "msc_init": (p, []),
        "msc_set_connector_info": (None, [p, s]),
        "msc_set_log_cb": (None, [p, _LogCallback]),
        "msc_cleanup": (None, [p]),
        "msc_create_rules_set": (p, []),
        "msc_rules_add_file": (i, [p, s, ctypes.POINTER(ctypes.c_char_p)]),
        "msc_rules_add": (i, [p, s, ctypes.POINTER(ctypes.c_char_p)]),
        "msc_rules_cleanup": (i, [p]),
        "msc_new_transaction": (p, [p, p, p]),
        "msc_process_connection": (i, [p, s, i, s, i]),
        "msc_process_uri": (i, [p, s, s, s]),
        "msc_add_n_request_header": (i, [p, s, ctypes.c_size_t, s, ctypes.c_size_t]),
        "msc_process_request_headers": (i, [p]),
        "msc_append_request_body": (i, [p, s, ctypes.c_size_t]),
        "msc_process_request_body": (i, [p]),
        "msc_intervention": (i, [p, ctypes.POINTER(_Intervention)]),
        "msc_process_logging": (i, [p]),
        "msc_transaction_cleanup": (None, [p]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    return lib


_libc = ctypes.CDLL(ctypes.util.find_library("c"))
_libc.free.argtypes = [ctypes.c_void_p]
_libc.free.restype = None


class RuleEngine:
    """ModSecurity with a rule set: ``directives`` (the engine's settings) first, then the
    rule ``files`` in order."""

    def __init__(
        self, files: Iterable[str], directives: str = "", *, library: str = LIBRARY
    ) -> None:
        self._lib = lib = _load(library)
        self._msc = lib.msc_init()
        lib.msc_set_connector_info(self._msc, b"portico-waf-engine")
        # log messages of a transaction land in its own list, keyed by the pointer-sized
        # token given to msc_new_transaction (the library passes it back untouched)
        self._matches: dict[int, list[bytes]] = {}
        self._tokens = itertools.count(1)
        self._lock = threading.Lock()
        self._callback = _LogCallback(self._on_log)  # kept referenced: C holds the pointer
        lib.msc_set_log_cb(self._msc, self._callback)
        self._rules = lib.msc_create_rules_set()
        error = ctypes.c_char_p()
        if (
            directives
            and lib.msc_rules_add(self._rules, directives.encode(), ctypes.byref(error)) < 0
        ):
            raise RuleEngineError(f"directives: {_text(error.value)}")
        for path in files:
            if lib.msc_rules_add_file(self._rules, path.encode(), ctypes.byref(error)) < 0:
                raise RuleEngineError(f"{path}: {_text(error.value)}")

    def _on_log(self, token: int | None, message: int | None) -> None:
        if token is None or message is None:
            return
        found = self._matches.get(token)
        if found is not None:
            found.append(ctypes.string_at(message))

    def inspect(
        self,
        *,
        method: str,
        uri: str,
        headers: Iterable[tuple[str, str]],
        client_ip: str,
        body: bytes = b"",
        http_version: str = "1.1",
    ) -> Verdict:
        lib = self._lib
        with self._lock:
            token = next(self._tokens)
            messages: list[bytes] = []
            self._matches[token] = messages
        transaction = lib.msc_new_transaction(self._msc, self._rules, ctypes.c_void_p(token))
        try:
            verdict = self._run(transaction, method, uri, headers, client_ip, body, http_version)
            lib.msc_process_logging(transaction)
        finally:
            lib.msc_transaction_cleanup(transaction)
            with self._lock:
                self._matches.pop(token, None)
        ids = [m.group(1).decode() for m in map(_RULE_ID.search, messages) if m is not None]
        verdict.matched = ids
        if verdict.blocked and ids:
            # the blocking rule (CRS: 949110, the anomaly score) is in the intervention's log;
            # the rule worth naming is the detection that raised the score: an attack rule
            # (CRS 930-944) before a protocol one (920: a missing header), else the first
            attacks = [i for i in ids if 930000 <= int(i) < 945000]
            verdict.rule_id = (attacks or ids)[0]
        return verdict

    def _run(
        self,
        transaction: int,
        method: str,
        uri: str,
        headers: Iterable[tuple[str, str]],
        client_ip: str,
        body: bytes,
        http_version: str,
    ) -> Verdict:
        lib = self._lib
        lib.msc_process_connection(transaction, client_ip.encode(), 0, b"127.0.0.1", 80)
        lib.msc_process_uri(transaction, uri.encode(), method.encode(), http_version.encode())
        verdict = self._intervention(transaction)
        if verdict is not None:
            return verdict
        for name, value in headers:
            key, val = name.encode(), value.encode()
            lib.msc_add_n_request_header(transaction, key, len(key), val, len(val))
        lib.msc_process_request_headers(transaction)
        verdict = self._intervention(transaction)
        if verdict is not None:
            return verdict
        if body:
            lib.msc_append_request_body(transaction, body, len(body))
        lib.msc_process_request_body(transaction)
        return self._intervention(transaction) or Verdict()

    def _intervention(self, transaction: int) -> Verdict | None:
        found = _Intervention(status=200)
        if not self._lib.msc_intervention(transaction, ctypes.byref(found)):
            return None
        log = ctypes.string_at(found.log) if found.log else b""
        for pointer in (found.url, found.log):  # strdup'ed by the library: ours to free
            if pointer:
                _libc.free(pointer)
        match = _RULE_ID.search(log)
        return Verdict(
            status=found.status or 403, rule_id=match.group(1).decode() if match else None
        )

    def close(self) -> None:
        self._lib.msc_rules_cleanup(self._rules)
        self._lib.msc_cleanup(self._msc)


def _text(value: bytes | None) -> str:
    return value.decode(errors="replace").strip() if value else "unknown error"
