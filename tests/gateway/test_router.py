"""Route matching: the precedence rules one by one, then properties — no spelling of a path
gets around a route's prefix, and the tree answers as a naive linear matcher does."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest
from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from portico.gateway.routing import router as router_module
from portico.gateway.routing.paths import PathRejected, canonical_segment, normalize_path
from portico.gateway.routing.router import Match, Router
from portico.gateway.snapshot import SnapshotRoute


def route(
    uri: str,
    rid: str | None = None,
    *,
    methods: Sequence[str] = (),
    hosts: Sequence[str] = (),
    priority: int = 0,
    status: int = 1,
) -> SnapshotRoute:
    return SnapshotRoute(
        id=rid or uri,
        api_id="api",
        api_name="api",
        revision_id="rev",
        revision_number=1,
        name=rid or uri,
        uri=uri,
        methods=list(methods),
        hosts=list(hosts),
        priority=priority,
        status=status,
        upstream_id="up",
        plugins=[],
    )


def matched(
    router: Router, path: str, method: str = "GET", host: str = "gw.example.com"
) -> str | None:
    found = router.match(method, host, path)
    return None if found is None else found.route.id


def params(router: Router, path: str, method: str = "GET", host: str = "h") -> dict[str, str]:
    found = router.match(method, host, path)
    assert found is not None
    return found.params


@contextmanager
def indexed_from(size: int) -> Iterator[None]:
    """Routers built inside index a pattern's routes from ``size`` routes on (default 8)."""
    with mock.patch.object(router_module, "_INDEX_OVER", size):
        yield


# --- patterns -----------------------------------------------------------------------------


def test_static_route_matches_its_path_only() -> None:
    router = Router.build([route("/a/b")])
    assert matched(router, "/a/b") == "/a/b"
    for path in ["/a", "/a/", "/a/b/", "/a/b/c", "/a/bc", "/A/b", "/"]:
        assert matched(router, path) is None, path


def test_root_route() -> None:
    router = Router.build([route("/")])
    assert matched(router, "/") == "/"
    assert matched(router, "/a") is None


def test_trailing_slash_is_significant() -> None:
    router = Router.build([route("/a"), route("/a/")])
    assert matched(router, "/a") == "/a"
    assert matched(router, "/a/") == "/a/"
    assert matched(Router.build([route("/a")]), "/a/") is None
    assert matched(Router.build([route("/a/")]), "/a") is None


def test_prefix_route_matches_below_but_not_itself() -> None:
    router = Router.build([route("/a/*")])
    assert matched(router, "/a/") == "/a/*"
    assert matched(router, "/a/b") == "/a/*"
    assert matched(router, "/a/b/c/") == "/a/*"
    assert matched(router, "/a") is None  # as APISIX
    assert matched(router, "/ab") is None
    assert matched(router, "/b/a/c") is None


def test_catch_all() -> None:
    router = Router.build([route("/*")])
    for path in ["/", "/a", "/a/b/c", "/a/"]:
        assert matched(router, path) == "/*"


def test_star_glued_to_a_segment_prefixes_it() -> None:
    router = Router.build([route("/api*")])
    for path in ["/api", "/apis", "/api/", "/api/v1/x"]:
        assert matched(router, path) == "/api*", path
    for path in ["/ap", "/", "/x/api"]:
        assert matched(router, path) is None, path


def test_param_matches_one_non_empty_segment() -> None:
    router = Router.build([route("/users/:id")])
    assert params(router, "/users/42") == {"id": "42"}
    for path in ["/users/", "/users", "/users/42/", "/users/42/x"]:
        assert matched(router, path) is None, path


def test_param_prefix() -> None:
    router = Router.build([route("/files/:bucket*")])
    assert params(router, "/files/b1") == {"bucket": "b1"}
    assert params(router, "/files/b1/") == {"bucket": "b1"}
    assert params(router, "/files/b1/x/y") == {"bucket": "b1"}
    assert matched(router, "/files/") is None
    assert matched(router, "/files") is None


def test_params_extraction() -> None:
    router = Router.build(
        [route("/orgs/:org/apis/:api/revisions/:rev"), route("/orgs/:org/files/*")]
    )
    assert params(router, "/orgs/o1/apis/a2/revisions/3") == {"org": "o1", "api": "a2", "rev": "3"}
    assert params(router, "/orgs/o1/files/x/y") == {"org": "o1"}
    assert params(Router.build([route("/static")]), "/static") == {}


def test_params_stay_percent_encoded_as_in_the_normalised_path() -> None:
    router = Router.build([route("/users/:name")])
    assert params(router, normalize_path("/users/caf%c3%a9")) == {"name": "caf%C3%A9"}
    assert params(router, normalize_path("/users/a%2fb")) == {"name": "a%2Fb"}
    assert params(router, normalize_path("/users/%7ejo")) == {"name": "~jo"}


def test_static_segments_are_compared_in_canonical_form() -> None:
    router = Router.build([route("/%7euser/a%2fb"), route("/caf%c3%a9*")])
    assert matched(router, normalize_path("/~user/a%2Fb")) == "/%7euser/a%2fb"
    assert matched(router, normalize_path("/%7Euser/a%2fb")) == "/%7euser/a%2fb"
    assert matched(router, normalize_path("/~user/a/b")) is None  # an encoded slash is data
    assert matched(router, normalize_path("/caf\xc3\xa9/menu")) == "/caf%c3%a9*"  # raw UTF-8


# --- precedence ---------------------------------------------------------------------------


@pytest.mark.parametrize("reverse", [False, True])
def test_static_beats_param_beats_prefix(reverse: bool) -> None:
    routes = [route("/users/me"), route("/users/:id"), route("/users/*")]
    router = Router.build(routes[::-1] if reverse else routes)
    assert matched(router, "/users/me") == "/users/me"
    assert matched(router, "/users/42") == "/users/:id"
    assert matched(router, "/users/") == "/users/*"  # a parameter is never empty
    assert matched(router, "/users/me/x") == "/users/*"
    assert matched(router, "/users") is None


@pytest.mark.parametrize("reverse", [False, True])
def test_prefix_order_longest_literal_then_param_then_bare(reverse: bool) -> None:
    routes = [route("/a/*"), route("/a/:p*"), route("/a/x*"), route("/a/xy*")]
    router = Router.build(routes[::-1] if reverse else routes)
    assert matched(router, "/a/xyz") == "/a/xy*"
    assert matched(router, "/a/xz/q") == "/a/x*"
    assert matched(router, "/a/z") == "/a/:p*"
    assert matched(router, "/a/") == "/a/*"


def test_deeper_prefix_beats_shallower() -> None:
    router = Router.build([route("/*"), route("/a/*"), route("/a/b/*")])
    assert matched(router, "/a/b/c") == "/a/b/*"
    assert matched(router, "/a/c") == "/a/*"
    assert matched(router, "/b") == "/*"


def test_backtracking_from_static_to_param() -> None:
    router = Router.build([route("/a/b/c"), route("/a/:x/d")])
    assert matched(router, "/a/b/c") == "/a/b/c"
    assert matched(router, "/a/b/d") == "/a/:x/d"
    assert params(router, "/a/b/d") == {"x": "b"}


def test_backtracking_to_a_shallower_prefix() -> None:
    router = Router.build([route("/a/b/c/d"), route("/a/:p/c/e"), route("/a/b/*"), route("/*")])
    assert matched(router, "/a/b/c/d") == "/a/b/c/d"
    # the static branch "b" is searched whole, its prefix included, before the param branch
    assert matched(router, "/a/b/c/e") == "/a/b/*"
    assert matched(router, "/a/z/c/e") == "/a/:p/c/e"
    assert params(router, "/a/z/c/e") == {"p": "z"}
    assert matched(router, "/a/b/c/f") == "/a/b/*"
    assert matched(router, "/a/z/c/f") == "/*"
    assert matched(router, "/a/b") == "/*"


def test_backtracking_discards_params_of_failed_branches() -> None:
    router = Router.build([route("/:a/:b/x"), route("/:c/*")])
    assert params(router, "/1/2/x") == {"a": "1", "b": "2"}
    assert params(router, "/1/2/y") == {"c": "1"}


def test_priority_does_not_beat_specificity() -> None:
    router = Router.build([route("/a/*", priority=100), route("/a/b", priority=-5)])
    assert matched(router, "/a/b") == "/a/b"


# --- methods, hosts, priority -------------------------------------------------------------


def test_methods() -> None:
    router = Router.build(
        [route("/r", "get", methods=["GET", "HEAD"]), route("/r", "post", methods=["POST"])]
    )
    assert matched(router, "/r", "GET") == "get"
    assert matched(router, "/r", "HEAD") == "get"
    assert matched(router, "/r", "POST") == "post"
    # the path matches but no route takes the method: None, the caller answers 404
    assert matched(router, "/r", "DELETE") is None
    assert matched(router, "/r", "get") is None  # methods are case-sensitive
    assert matched(Router.build([route("/r")]), "/r", "PURGE") == "/r"  # none listed: any


def test_a_pattern_of_one_route_takes_its_methods_alone() -> None:
    """One route to a pattern, any host: matched through its method mask, the methods
    without a bit (a WebDAV or cache verb) by name."""
    router = Router.build(
        [
            route("/a", "get", methods=["GET"]),
            route("/b", "purge", methods=["PURGE", "POST"]),
            route("/c/*", "any"),
        ]
    )
    assert matched(router, "/a", "GET") == "get"
    assert matched(router, "/a", "HEAD") is None
    assert matched(router, "/a", "PURGE") is None
    assert matched(router, "/b", "PURGE") == "purge"
    assert matched(router, "/b", "POST") == "purge"
    assert matched(router, "/b", "GET") is None
    assert matched(router, "/b", "MKCOL") is None
    assert matched(router, "/b", "purge") is None  # case-sensitive, as ever
    assert matched(router, "/c/x", "MKCOL") == "any"
    assert matched(router, "/c/x", "TRACE") == "any"


def test_refused_method_falls_through_to_a_less_specific_pattern() -> None:
    router = Router.build([route("/a/b", "exact", methods=["GET"]), route("/a/*", "prefix")])
    assert matched(router, "/a/b", "GET") == "exact"
    assert matched(router, "/a/b", "POST") == "prefix"


def test_hosts_exact_and_case_insensitive() -> None:
    router = Router.build([route("/r", "r", hosts=["API.Example.com", "b.example.com"])])
    assert matched(router, "/r", host="api.example.com") == "r"
    assert matched(router, "/r", host="b.example.com") == "r"
    assert matched(router, "/r", host="c.example.com") is None
    assert matched(router, "/r", host="example.com") is None


def test_wildcard_host_needs_one_or_more_labels_in_front() -> None:
    router = Router.build([route("/r", "r", hosts=["*.Example.com"])])
    assert matched(router, "/r", host="a.example.com") == "r"
    assert matched(router, "/r", host="a.b.example.com") == "r"
    assert matched(router, "/r", host="example.com") is None
    assert matched(router, "/r", host="aexample.com") is None
    assert matched(router, "/r", host="a.example.com.evil") is None


def test_no_hosts_means_any_host() -> None:
    router = Router.build([route("/r")])
    assert matched(router, "/r", host="anything.example") == "/r"
    assert matched(router, "/r", host="") == "/r"


def test_refused_host_falls_through() -> None:
    router = Router.build([route("/api/users", "b", hosts=["b.com"]), route("/api/*", "any")])
    assert matched(router, "/api/users", host="b.com") == "b"
    assert matched(router, "/api/users", host="a.com") == "any"


def test_highest_priority_wins_then_snapshot_order() -> None:
    routes = [
        route("/r", "low", priority=1),
        route("/r", "high-1", priority=5),
        route("/r", "high-2", priority=5),
    ]
    assert matched(Router.build(routes), "/r") == "high-1"
    assert matched(Router.build([routes[0], routes[2], routes[1]]), "/r") == "high-2"
    assert matched(Router.build([routes[0]]), "/r") == "low"


def test_priority_among_routes_accepting_the_request() -> None:
    router = Router.build(
        [
            route("/r", "top-get", methods=["GET"], priority=9),
            route("/r", "top-host", hosts=["x.com"], priority=8),
            route("/r", "fallback", priority=0),
        ]
    )
    assert matched(router, "/r", "GET", "x.com") == "top-get"
    assert matched(router, "/r", "POST", "x.com") == "top-host"
    assert matched(router, "/r", "POST", "y.com") == "fallback"


def test_patterns_differing_only_in_param_names_are_one_pattern() -> None:
    router = Router.build(
        [route("/pets/:id", "a", priority=1), route("/pets/:petId", "b", priority=2)]
    )
    found = router.match("GET", "h", "/pets/7")
    assert found is not None and found.route.id == "b" and found.params == {"petId": "7"}
    router = Router.build(
        [route("/pets/:id", "a", methods=["GET"]), route("/pets/:petId", "b", methods=["PUT"])]
    )
    assert params(router, "/pets/7", "GET") == {"id": "7"}
    assert params(router, "/pets/7", "PUT") == {"petId": "7"}


def test_disabled_routes_never_match_and_are_not_counted() -> None:
    routes = [route("/r", "off", priority=10, status=0), route("/r", "on"), route("/x", status=0)]
    router = Router.build(routes)
    assert matched(router, "/r") == "on"
    assert matched(router, "/x") is None
    assert len(router) == 1  # "on" only
    assert len(Router.build([])) == 0


def test_disabled_route_with_unreadable_uri_is_ignored() -> None:
    assert len(Router.build([route("no-slash", status=0)])) == 0


@pytest.mark.parametrize("uri", ["no-slash", "/a/*/b", "/a**", "/%zz", "/a/%4"])
def test_unreadable_uri_refuses_the_snapshot(uri: str) -> None:
    with pytest.raises(ValueError, match=re.escape(repr(uri))):
        Router.build([route("/ok"), route(uri, "bad")])


def test_match_is_immutable() -> None:
    found = Router.build([route("/r")]).match("GET", "h", "/r")
    assert isinstance(found, Match)
    with pytest.raises(AttributeError):
        found.route = found.route  # type: ignore[misc]


def test_many_routes_in_one_pattern_are_indexed_by_host_and_method() -> None:
    routes = [route("/api/*", f"t{i}", hosts=[f"t{i}.example.com"]) for i in range(50)]
    routes += [
        route("/api/*", "wild-get", hosts=["*.example.com"], methods=["GET"], priority=1),
        route("/api/*", "late-any", priority=-1),
        route("/api/*", "t7-post", hosts=["T7.example.com"], methods=["POST"], priority=2),
    ]
    router = Router.build(routes)
    assert matched(router, "/api/x", "PUT", "t3.example.com") == "t3"
    assert matched(router, "/api/x", "GET", "t3.example.com") == "wild-get"
    assert matched(router, "/api/x", "GET", "new.example.com") == "wild-get"
    assert matched(router, "/api/x", "GET", "a.b.example.com") == "wild-get"
    assert matched(router, "/api/x", "POST", "new.example.com") == "late-any"
    assert matched(router, "/api/x", "POST", "t7.example.com") == "t7-post"
    assert matched(router, "/api/x", "GET", "example.com") == "late-any"


def test_deep_route_builds_and_matches_without_recursion() -> None:
    uri = "/" + "/".join(f"s{i}" for i in range(3000))
    router = Router.build([route(uri, "deep"), route("/s0/*", "shallow")])
    assert matched(router, uri) == "deep"
    assert matched(router, uri + "x") == "shallow"


def test_ten_thousand_routes() -> None:
    routes = [route(f"/svc{i % 100}/r{i}/:id", f"r{i}", methods=["GET"]) for i in range(10_000)]
    routes.append(route("/svc7/*", "fallback"))
    router = Router.build(routes)  # how fast: the bench measures it, tests never time
    assert len(router) == 10_001
    assert params(router, "/svc42/r9942/abc") == {"id": "abc"}
    assert matched(router, "/svc42/r9942/abc") == "r9942"
    assert matched(router, "/svc7/r9942/abc") == "fallback"
    assert matched(router, "/svc42/r9942/abc", "POST") is None


# --- property: no spelling gets around a route's prefix -----------------------------------

ADMIN_ROUTER = Router.build([route("/admin/*", "admin"), route("/*", "public")])
SAFE_SEGMENT = st.text(alphabet="abcXYZ019-_~.", min_size=1, max_size=6).map(
    lambda s: s + "x" if s in (".", "..") else s
)


@st.composite
def spelled(draw: st.DrawFn, segment: str) -> str:
    """``segment`` spelled some other way, with detours before it."""
    out = []
    for char in segment:
        if draw(st.booleans()):
            octet = f"{ord(char):02x}"
            out.append("%" + "".join(draw(st.sampled_from([c.lower(), c.upper()])) for c in octet))
        else:
            out.append(char)
    detours = draw(
        st.lists(st.sampled_from(["", ".", "%2e", "%2E", "x/..", "z/%2e%2e", "./."]), max_size=3)
    )
    return "".join(d + "/" for d in detours) + "".join(out)


@st.composite
def decorated_admin_path(draw: st.DrawFn) -> tuple[str, str]:
    """(a decorated spelling, the plain path it stands for) of a path under /admin/."""
    segments = draw(st.lists(SAFE_SEGMENT, max_size=4))
    trailing = draw(st.booleans()) or not segments
    plain = "/admin/" + "/".join(segments) + ("/" if trailing and segments else "")
    parts = [draw(spelled(s)) for s in ["admin", *segments]]
    raw = "/" + "/".join(parts) + ("/" if trailing else "")
    raw = re.sub("/", lambda _: draw(st.sampled_from(["/", "//", "///"])), raw)
    return raw, plain


@settings(max_examples=1000, deadline=None)
@given(decorated_admin_path())
@example(("/%61dmin/", "/admin/"))
@example(("//x/..//admin/%2e/secret", "/admin/secret"))
def test_no_spelling_of_an_admin_path_gets_around_the_admin_route(
    case: tuple[str, str],
) -> None:
    raw, plain = case
    path = normalize_path(raw)
    assert path == plain
    assert path.startswith("/admin/")
    assert matched(ADMIN_ROUTER, path) == "admin"


ATTACK = st.lists(
    st.sampled_from(
        [
            "admin",
            "%61dmin",
            "ADMIN",
            "x",
            "",
            ".",
            "..",
            "%2e%2e",
            ".%2E",
            "%2f",
            "admin%2F",
            "..;",
            "admin;x",
            "%2e",
            "a%00",
            "%",
        ]
    ),
    max_size=6,
).map(lambda segs: "/" + "/".join(segs))


@settings(max_examples=2000, deadline=None)
@given(
    st.one_of(
        ATTACK,
        ATTACK.map(lambda path: "/admin" + path),
        st.text(alphabet="/.%2eEfF41admin;", max_size=30).map(lambda s: "/" + s),
    )
)
@example("/admin/../public")
@example("/admin%2Fsecret")
@example("/x/../admin/")
def test_the_admin_route_matches_exactly_the_paths_normalised_under_admin(raw: str) -> None:
    try:
        path = normalize_path(raw)
    except PathRejected:
        event("rejected")
        return
    expected = "admin" if path.startswith("/admin/") else "public"
    event(expected)
    assert matched(ADMIN_ROUTER, path) == expected


# --- property: the tree answers as a naive linear matcher ---------------------------------

STATIC = ["a", "b", "ab", "%7e"]
ROUTE_SEGMENT = st.sampled_from([*STATIC, ":p", ":q", ""])
GLUED = st.sampled_from([None, "*", "a*", "ab*", ":g*"])
# (PURGE: a method the router has no bit for, compared by name)
METHODS = ["GET", "POST", "PUT", "PURGE"]
ROUTE_HOSTS = ["x.com", "*.x.com", "Y.X.com", "*.Y.x.com", "z.com"]
REQUEST_HOSTS = ["x.com", "y.x.com", "z.y.x.com", "w.x.com", "z.com", "q.com", "", ".x.com"]


@st.composite
def random_route(draw: st.DrawFn, index: int) -> SnapshotRoute:
    segments = draw(st.lists(ROUTE_SEGMENT, max_size=3))
    # a pattern never holds an empty segment but its last (a trailing slash)
    segments = [s for s in segments[:-1] if s] + segments[-1:]
    names = iter(f"n{i}" for i in range(10))
    segments = [f":{next(names)}" if s.startswith(":") else s for s in segments]
    glued = draw(GLUED)
    uri = "/" + "/".join(segments)
    if glued is not None:
        if segments and segments[-1] != "":
            uri += "/"
        uri += glued.replace(":g", f":{next(names)}")
    return route(
        uri,
        f"r{index}",
        methods=draw(st.lists(st.sampled_from(METHODS), unique=True, max_size=2)),
        hosts=draw(st.lists(st.sampled_from(ROUTE_HOSTS), unique=True, max_size=2)),
        priority=draw(st.integers(0, 2)),
        status=draw(st.sampled_from([1, 1, 1, 0])),
    )


@st.composite
def random_routes(draw: st.DrawFn) -> list[SnapshotRoute]:
    count = draw(st.integers(0, 30))
    return [draw(random_route(i)) for i in range(count)]


REQUEST_PATH = st.lists(st.sampled_from(["a", "b", "ab", "abc", "~", "c"]), max_size=4).flatmap(
    lambda segs: st.sampled_from(["", "/"] if segs else ["/"]).map(
        lambda end: "/" + "/".join(segs) + (end if segs else "")
    )
)
REQUEST = st.tuples(st.sampled_from(METHODS), st.sampled_from(REQUEST_HOSTS), REQUEST_PATH)


class Reference:
    """The rules, written as directly as possible: each route a regular expression; among
    routes matching the request, the most specific pattern — compared level by level:
    static < param < glued literal (longer first) < ':param*' < '*' — then priority, then
    snapshot order."""

    def __init__(self, routes: Sequence[SnapshotRoute]) -> None:
        self.compiled: list[tuple[SnapshotRoute, re.Pattern[str], tuple[Any, ...], int]] = []
        for index, r in enumerate(routes):
            if r.status == 0:
                continue
            prefix = r.uri.endswith("*")
            segments = r.uri.removesuffix("*")[1:].split("/")
            regex = ""
            key: list[tuple[int, ...]] = []
            for position, segment in enumerate(segments):
                last = position == len(segments) - 1
                regex += "/"
                if prefix and last:
                    if segment.startswith(":"):
                        regex += f"(?P<{segment[1:]}>[^/]+).*"
                        key.append((3,))
                    else:
                        literal = canonical_segment(segment)
                        regex += re.escape(literal) + ".*"
                        key.append((2, -len(literal)) if literal else (4,))
                elif segment.startswith(":"):
                    regex += f"(?P<{segment[1:]}>[^/]+)"
                    key.append((1,))
                else:
                    regex += re.escape(canonical_segment(segment))
                    key.append((0,))
            self.compiled.append((r, re.compile(regex, re.S), tuple(key), index))

    def match(self, method: str, host: str, path: str) -> tuple[str, dict[str, str]] | None:
        best: tuple[Any, ...] | None = None
        for r, regex, key, index in self.compiled:
            found = regex.fullmatch(path)
            if found is None or (r.methods and method not in r.methods):
                continue
            if r.hosts and not any(host_accepts(h.lower(), host) for h in r.hosts):
                continue
            rank = (key, -r.priority, index)
            if best is None or rank < best[0]:
                best = (rank, r.id, found.groupdict())
        return None if best is None else (best[1], best[2])


def host_accepts(pattern: str, host: str) -> bool:
    if pattern.startswith("*."):
        return host.endswith(pattern[1:]) and len(host) > len(pattern) - 1
    return host == pattern


def answer(router: Router, method: str, host: str, path: str) -> tuple[str, dict[str, str]] | None:
    found = router.match(method, host, path)
    return None if found is None else (found.route.id, found.params)


@settings(max_examples=500, deadline=None)
@given(random_routes(), st.lists(REQUEST, min_size=1, max_size=25), st.sampled_from([0, 8]))
def test_router_answers_as_the_linear_reference(
    routes: list[SnapshotRoute], requests: list[tuple[str, str, str]], index_over: int
) -> None:
    with indexed_from(index_over):  # 0: every pattern's routes indexed by host and method
        router = Router.build(routes)
    reference = Reference(routes)
    assert len(router) == len(reference.compiled)
    for method, host, path in requests:
        expected = reference.match(method, host, path)
        assert answer(router, method, host, path) == expected, (method, host, path)
        uri = None if expected is None else next(r.uri for r in routes if r.id == expected[0])
        event("no match" if uri is None else "prefix" if uri.endswith("*") else "exact")


# --- what a match hands back -------------------------------------------------------------


def test_a_match_hands_back_the_target_given_for_its_route() -> None:
    routes = [route("/static", "s"), route("/users/:id", "p"), route("/files/*", "f")]
    targets = {r.id: object() for r in routes}
    router = Router.build(routes, targets)
    for path, rid in [("/static", "s"), ("/users/7", "p"), ("/files/a/b", "f")]:
        found = router.match("GET", "h", path)
        assert found is not None
        assert found.route.id == rid
        assert found.target is targets[rid]


def test_without_targets_a_match_hands_back_its_route() -> None:
    router = Router.build([route("/users/:id", "p")])
    found = router.match("GET", "h", "/users/7")
    assert found is not None
    assert found.target is found.route
