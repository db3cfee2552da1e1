"""Route matching: which route of the environment's snapshot serves a request.

:meth:`Router.build` runs once per config snapshot; :meth:`Router.match` runs per request
on a path :func:`portico.gateway.routing.paths.normalize_path` has already normalised and a host
already lower-cased and stripped of its port.

**Patterns** (a route's ``uri``, as the management API's ``routeSpec`` writes it). As a
regular expression over the normalised path: a static segment matches itself, ``:name``
matches ``[^/]+`` (exactly one non-empty segment) and a trailing ``*`` matches ``.*``:

* ``/a/b`` matches ``/a/b`` only: ``/a/b/`` is another path (a trailing slash counts);
* ``/a/*`` matches ``/a/`` and ``/a/b/c`` but not ``/a`` (as APISIX);
* ``/a*`` matches ``/a``, ``/ab`` and ``/a/b`` (a ``*`` glued to a segment prefixes that
  segment); ``/*`` matches every path;
* ``/a/:id*`` matches ``/a/x`` and ``/a/x/y``: the parameter takes the first segment.

Static segments are compared in canonical form (``canonical_segment``), so a route written
``/%7euser`` serves the request ``/~user``.

**Precedence** (APISIX-like). The patterns form a tree keyed by path segments, so the cost
of a match depends on the path and the patterns it meets, not on the number of routes. At
each level the most specific branch is tried first — a static segment, then ``:param``, then
prefixes (a longer glued literal first, then ``:param*``, then a bare ``*``) — and the search
backtracks to the next branch when nothing further down serves the request (each node is
visited at most once per request; an all-static pattern, the most specific there is, is
looked up by the whole path first). Among the routes of one pattern (``/pets/:id`` and
``/pets/:petId`` are one pattern, as the control plane's conflict check judges them), those
accepting the request's method (no methods: any; compared exactly) and host (exact, or
``*.example.com`` for one or more labels in front of ``example.com``; no hosts: any;
compared case-insensitively) compete: the highest ``priority`` wins, then the route listed
first in the snapshot. Priority orders routes of one pattern only; it never lets a
less specific pattern beat a more specific one. A pattern none of whose routes accepts the
method or host does not stop the search: a less specific pattern may serve the request
(``GET /a/b`` route, ``/a/*`` route for any method: ``POST /a/b`` goes to ``/a/*``).

Disabled routes (``status == 0``) are left out. When no route serves the request — no
pattern matches, or every matching pattern's routes refuse its method or host — ``match``
returns ``None`` and the caller answers 404, as APISIX does (never 405).

**Parameters** are the segments of the normalised path, still percent-encoded as it writes
them (``/users/caf%C3%A9`` gives ``{"id": "caf%C3%A9"}``; ``%2F`` stays ``%2F``): a value put
back into a path or a header cannot smuggle a ``/`` or a control character.
``urllib.parse.unquote(value)`` gives the text (the path is valid UTF-8, it cannot fail).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from portico.gateway.routing.paths import PathRejected, canonical_segment
from portico.gateway.snapshot import SnapshotRoute

__all__ = ["Match", "Router"]

#: a pattern with more routes than this indexes them by host and method
_INDEX_OVER: Final = 8
#: a bit per method a route may name: a route's methods as a mask (``_Entry.method_mask``)
_METHOD_BITS: Final = {
    name: 1 << i
    for i, name in enumerate(
        ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE")
    )
}
_ANY_METHOD: Final = (1 << 9) - 1


class Match:
    """The route a request matched, read-only. (A plain class, not a
    ``NamedTuple``: see CONVENTIONS.md "Compiled modules".)"""

    __slots__ = ("_params", "_route", "_target")

    def __init__(self, route: SnapshotRoute, params: dict[str, str], target: object) -> None:
        self._route = route
        self._params = params
        self._target = target

    @property
    def route(self) -> SnapshotRoute:
        return self._route

    @property
    def target(self) -> object:
        """What ``Router.build`` was given for the route (its ``targets``), else the route."""
        return self._target

    @property
    def params(self) -> dict[str, str]:
        """``:name`` → the segment it matched, percent-encoded as in the normalised path."""
        return self._params


class _Entry:
    """A route as the matcher sees it."""

    __slots__ = (
        "hosts",
        "method_mask",
        "methods",
        "names",
        "rank",
        "route",
        "target",
        "wildcards",
    )

    def __init__(
        self, route: SnapshotRoute, names: tuple[str, ...], rank: int, target: object
    ) -> None:
        # (compiled, the fields lie in the order first assigned: what a match reads first,
        # side by side, in as few cache lines as may be)
        #: the methods among ``_METHOD_BITS`` it accepts (others: ``methods`` says)
        self.method_mask = _ANY_METHOD
        self.route = route
        self.target = target
        self.names = names
        #: position in (-priority, snapshot order): lower wins
        self.rank = rank
        self.methods: frozenset[str] | None = frozenset(route.methods) if route.methods else None
        if self.methods is not None:
            self.method_mask = 0
            for method in self.methods:
                self.method_mask |= _METHOD_BITS.get(method, 0)
        exact = {h.lower() for h in route.hosts if not h.startswith("*.")}
        #: "*.example.com" kept as ".example.com"
        self.wildcards = tuple(sorted({h[1:].lower() for h in route.hosts if h.startswith("*.")}))
        self.hosts: frozenset[str] | None = frozenset(exact) if route.hosts else None

    def takes(self, method: str) -> bool:
        """Whether the route accepts ``method``: by its bit (``method_mask``), a method
        without a bit by name (no methods: any)."""
        bit = _METHOD_BITS.get(method, 0)
        if bit:
            return bool(self.method_mask & bit)
        return self.methods is None or method in self.methods


def _wildcard(host: str, suffixes: tuple[str, ...]) -> bool:
    """``host`` has one or more labels in front of one of ``suffixes`` (".example.com")."""
    for suffix in suffixes:  # noqa: SIM110 (no generator on the hot path)
        if host.endswith(suffix) and len(host) > len(suffix):
            return True
    return False


_ByMethod = dict[str, _Entry]  # method ("" = any method) → the best route


class _Candidates:
    """The enabled routes of one pattern. Up to ``_INDEX_OVER`` routes a scan in rank order
    is fastest; beyond, the best route per (host, method) key is looked up, so a pattern
    shared by thousands of routes (one per tenant host) costs a few dictionary lookups."""

    __slots__ = ("_any_host", "_entries", "_exact", "_only", "_wild")

    def __init__(self, entries: list[_Entry]) -> None:
        self._entries = sorted(entries, key=lambda e: e.rank)
        #: the pattern's one route when it accepts any host (most patterns): what pick reads
        #: then is this entry alone (with thousands of routes, each list and set more it
        #: read was a cache miss)
        self._only: _Entry | None = None
        if len(self._entries) == 1 and self._entries[0].hosts is None:
            self._only = self._entries[0]
        self._any_host: _ByMethod | None = None
        self._exact: dict[str, _ByMethod] = {}
        self._wild: dict[str, _ByMethod] = {}
        if len(self._entries) <= _INDEX_OVER:
            return
        self._any_host = {}
        for entry in self._entries:  # best first: setdefault keeps the best per key
            methods = entry.methods or ("",)
            tables: list[_ByMethod] = []
            if entry.hosts is None:
                tables.append(self._any_host)
            else:
                tables += [self._exact.setdefault(h, {}) for h in entry.hosts]
                tables += [self._wild.setdefault(s, {}) for s in entry.wildcards]
            for table in tables:
                for method in methods:
                    table.setdefault(method, entry)

    def pick(self, method: str, host: str) -> _Entry | None:
        only = self._only
        if only is not None:
            return only if only.takes(method) else None
        if self._any_host is None:
            for entry in self._entries:
                if not entry.takes(method):
                    continue
                hosts = entry.hosts
                if hosts is None or host in hosts or _wildcard(host, entry.wildcards):
                    return entry
            return None
        tables = [self._any_host]
        exact = self._exact.get(host)
        if exact is not None:
            tables.append(exact)
        if self._wild:
            dot = host.find(".", 1)
            while dot != -1:
                wild = self._wild.get(host[dot:])
                if wild is not None:
                    tables.append(wild)
                dot = host.find(".", dot + 1)
        best: _Entry | None = None
        for table in tables:
            for key in (method, ""):
                found = table.get(key)
                if found is not None and (best is None or found.rank < best.rank):
                    best = found
        return best


class _Node:
    """A tree node: the patterns sharing the segments that lead here."""

    __slots__ = (
        "any_prefix",
        "branchy",
        "param",
        "param_prefix",
        "prefix_lengths",
        "prefixes",
        "static",
        "terminal",
    )

    def __init__(self) -> None:
        self.static: dict[str, _Node] = {}
        self.param: _Node | None = None
        self.terminal: _Candidates | None = None
        #: glued literal prefixes of the next segment ("/a/ab*": "ab" at node "a")
        self.prefixes: dict[str, _Candidates] = {}
        self.prefix_lengths: tuple[int, ...] = ()  # distinct literal lengths, longest first
        self.param_prefix: _Candidates | None = None  # "/a/:id*"
        self.any_prefix: _Candidates | None = None  # "/a/*"
        #: anything to try after the static child: the matcher must remember this level
        self.branchy = False


class _Draft:
    """A node while the tree is built: routes are collected, then frozen into a _Node."""

    def __init__(self) -> None:
        self.static: dict[str, _Draft] = {}
        self.param: _Draft | None = None
        self.terminal: list[_Entry] = []
        self.prefixes: dict[str, list[_Entry]] = {}
        self.param_prefix: list[_Entry] = []

    def freeze(self) -> _Node:
        """The tree under this draft, frozen. Iterative: a route may have thousands of
        segments, more than Python's recursion limit."""
        drafts = [self]
        for draft in drafts:  # grows while it is walked: every draft of the tree, once
            drafts += draft.static.values()
            if draft.param is not None:
                drafts.append(draft.param)
        nodes = {id(draft): _Node() for draft in drafts}
        for draft in drafts:
            node = nodes[id(draft)]
            node.static = {key: nodes[id(child)] for key, child in draft.static.items()}
            node.param = nodes[id(draft.param)] if draft.param is not None else None
            node.terminal = _Candidates(draft.terminal) if draft.terminal else None
            node.prefixes = {lit: _Candidates(e) for lit, e in draft.prefixes.items() if lit}
            node.prefix_lengths = tuple(sorted({len(x) for x in node.prefixes}, reverse=True))
            node.param_prefix = _Candidates(draft.param_prefix) if draft.param_prefix else None
            any_prefix = draft.prefixes.get("")
            node.any_prefix = _Candidates(any_prefix) if any_prefix else None
            node.branchy = bool(
                node.param is not None or node.prefixes or node.param_prefix or node.any_prefix
            )
        return nodes[id(self)]


def _is_param(segment: str) -> bool:
    return len(segment) > 1 and segment[0] == ":"


class Router:
    """The routes of one config snapshot, ready to match requests. Immutable once built."""

    __slots__ = ("_count", "_exact", "_root")

    def __init__(self, root: _Node, exact: dict[str, _Candidates], count: int) -> None:
        self._root = root
        #: the routes of all-static patterns by path: they win over any other pattern
        #: matching that path, so one lookup settles most requests of most APIs
        self._exact = exact
        self._count = count

    @classmethod
    def build(
        cls, routes: Sequence[SnapshotRoute], targets: Mapping[str, object] | None = None
    ) -> Router:
        """The router over ``routes`` (a snapshot's, in its order). A uri that is not a
        pattern (no leading '/', '*' before the end, an invalid escape) raises ValueError
        naming the route: a snapshot the router cannot read is refused whole. ``targets``:
        what a match hands back for each route, by route id (the gateway's compiled routes:
        a request then reads nothing more of the route to find it), else the route."""
        enabled = [(i, r) for i, r in enumerate(routes) if r.status != 0]
        ranked = sorted(enabled, key=lambda item: (-item[1].priority, item[0]))
        draft = _Draft()
        static: set[str] = set()
        for rank, (_, route) in enumerate(ranked):
            try:
                target = route if targets is None else targets[route.id]
                path = _insert(draft, route, rank, target)
            except (ValueError, PathRejected) as error:
                raise ValueError(f"route {route.id!r}: uri {route.uri!r}: {error}") from None
            if path is not None:
                static.add(path)
        root = draft.freeze()
        exact = {}
        for path in static:
            node = root
            for segment in path.split("/")[1:]:
                node = node.static[segment]
            if node.terminal is not None:  # it is: the route ends there
                exact[path] = node.terminal
        return cls(root, exact, len(ranked))

    def __len__(self) -> int:
        """The number of enabled routes (disabled ones are not indexed)."""
        return self._count

    def match(self, method: str, host: str, path: str) -> Match | None:
        """The route serving ``method host path``, with its parameters; None: 404."""
        candidates = self._exact.get(path)
        if candidates is not None:
            entry = candidates.pick(method, host)
            if entry is not None:
                return Match(entry.route, {}, entry.target)
        segments = path.split("/")
        count = len(segments)
        node = self._root
        index = 1
        values: list[str] = []
        # levels to come back to: (node, segment index, len(values), param branch tried)
        stack: list[tuple[_Node, int, int, bool]] = []
        while True:
            while index < count:  # descend by static segments as far as they go
                if node.branchy:
                    stack.append((node, index, len(values), False))
                child = node.static.get(segments[index])
                if child is None:
                    break
                node = child
                index += 1
            else:  # the path is consumed: the routes ending here
                if node.terminal is not None:
                    entry = node.terminal.pick(method, host)
                    if entry is not None:
                        return _found(entry, values)
            while stack:  # backtrack: the next branch of the deepest level left
                node, index, kept, param_tried = stack.pop()
                del values[kept:]
                segment = segments[index]
                if not param_tried and node.param is not None and segment:
                    stack.append((node, index, kept, True))
                    values.append(segment)
                    node = node.param
                    index += 1
                    break
                found = _prefix(node, segment, method, host, values)
                if found is not None:
                    return found
            else:
                return None


def _prefix(node: _Node, segment: str, method: str, host: str, values: list[str]) -> Match | None:
    """The prefix routes of ``node`` serving a path whose next segment is ``segment``."""
    if node.prefix_lengths:
        size = len(segment)
        for length in node.prefix_lengths:
            if length <= size:
                candidates = node.prefixes.get(segment[:length])
                if candidates is not None:
                    entry = candidates.pick(method, host)
                    if entry is not None:
                        return _found(entry, values)
    if node.param_prefix is not None and segment:
        entry = node.param_prefix.pick(method, host)
        if entry is not None:
            return _found(entry, [*values, segment])
    if node.any_prefix is not None:
        entry = node.any_prefix.pick(method, host)
        if entry is not None:
            return _found(entry, values)
    return None


def _found(entry: _Entry, values: list[str]) -> Match:
    # one value per parameter of the pattern, by construction of the walk
    params = dict(zip(entry.names, values, strict=True)) if entry.names else {}
    return Match(entry.route, params, entry.target)


def _insert(root: _Draft, route: SnapshotRoute, rank: int, target: object) -> str | None:
    """Add ``route`` to the tree; its canonical path if its pattern is all static."""
    uri = route.uri
    if not uri.startswith("/"):
        raise ValueError("must start with '/'")
    prefix = uri.endswith("*")
    body = uri[:-1] if prefix else uri
    if "*" in body:
        raise ValueError("'*' is allowed only as the last character")
    segments = body[1:].split("/")
    glued = segments.pop() if prefix else None
    names: list[str] = []
    node = root
    for segment in segments:
        if _is_param(segment):
            names.append(segment[1:])
            if node.param is None:
                node.param = _Draft()
            node = node.param
        else:
            key = canonical_segment(segment)
            child = node.static.get(key)
            if child is None:
                child = node.static[key] = _Draft()
            node = child
    if glued is None:
        node.terminal.append(_Entry(route, tuple(names), rank, target))
        return None if names else "/" + "/".join(map(canonical_segment, segments))
    if _is_param(glued):
        names.append(glued[1:])
        node.param_prefix.append(_Entry(route, tuple(names), rank, target))
    else:
        literal = canonical_segment(glued)
        node.prefixes.setdefault(literal, []).append(_Entry(route, tuple(names), rank, target))
    return None
