"""Request path normalisation: every spelling of a path has one canonical form, hostile
spellings are refused, and the result is a fixed point (properties at the end)."""

from __future__ import annotations

import string

import pytest
from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from portico.gateway.routing.paths import PathRejected, canonical_segment, normalize_path


def wire(text: str) -> str:
    """``text`` sent as UTF-8 and read off the wire as the server does (latin-1)."""
    return text.encode("utf-8").decode("latin-1")


CANONICAL = [
    # common paths are returned unchanged
    ("/", "/"),
    ("/api/v1/users/123", "/api/v1/users/123"),
    ("/a/b/", "/a/b/"),
    ("/a:b@c/!$&'()*+,;=", "/a:b@c/!$&'()*+,;="),
    ("/.well-known/openid-configuration", "/.well-known/openid-configuration"),
    ("/a/...", "/a/..."),
    ("/a/.b/..c/c..", "/a/.b/..c/c.."),
    # duplicate slashes merged, trailing slash kept
    ("//", "/"),
    ("//a///b", "/a/b"),
    ("/a//", "/a/"),
    # dot segments (RFC 3986 5.2.4)
    ("/.", "/"),
    ("/./", "/"),
    ("/a/.", "/a/"),
    ("/a/./b", "/a/b"),
    ("/a/..", "/"),
    ("/a/b/..", "/a/"),
    ("/a/b/../", "/a/"),
    ("/a/b/../c", "/a/c"),
    ("/a/b/c/../../d", "/a/d"),
    ("/a/./../b/./c/.", "/b/c/"),
    ("/a//..", "/"),
    # unreserved escapes decoded, %2E included
    ("/%7euser", "/~user"),
    ("/%41%62%63", "/Abc"),
    ("/%2D%2e%5F%7E", "/-._~"),
    ("/a/%2e%2E/b", "/b"),
    ("/a/.%2e/b", "/b"),
    ("/a/%2e/b", "/a/b"),
    # other escapes keep their octet, hex upper-cased; %2F stays data
    ("/a%2fb", "/a%2Fb"),
    ("/a%2Fb/..", "/"),
    ("/a/%2e%2e%2fb", "/a/..%2Fb"),
    ("/%c3%a9t%C3%A9", "/%C3%A9t%C3%A9"),
    ("/%25", "/%25"),
    ("/%252e", "/%252e"),
    ("/%3a%40", "/%3A%40"),
    # characters not allowed raw: encoded; raw octets (latin-1, as the server reads them)
    (wire("/café"), "/caf%C3%A9"),
    (wire("/café/%c3%a9"), "/caf%C3%A9/%C3%A9"),
    (wire("/😀/€"), "/%F0%9F%98%80/%E2%82%AC"),
    ("/caf%C3\xa9", "/caf%C3%A9"),  # one character, spelled as an escape and a raw octet
    ("/a|b{c}", "/a%7Cb%7Bc%7D"),
    ('/"<>^`', "/%22%3C%3E%5E%60"),
]


@pytest.mark.parametrize(("raw", "expected"), CANONICAL)
def test_canonical_form(raw: str, expected: str) -> None:
    assert normalize_path(raw) == expected
    assert normalize_path(expected) == expected


REJECTED = [
    ("", "start with '/'"),
    ("*", "start with '/'"),
    ("a/b", "start with '/'"),
    ("http://example.com/a", "start with '/'"),
    ("%2F", "start with '/'"),
    # climbing out of the root is an attack signal, not clamped
    ("/..", "above the root"),
    ("/../a", "above the root"),
    ("/a/../..", "above the root"),
    ("/a/../../b", "above the root"),
    ("/%2e%2e/etc/passwd", "above the root"),
    ("/.%2E/", "above the root"),
    ("/a/b/../../../c", "above the root"),
    ("//..//a", "above the root"),
    # controls, raw or encoded (C0, DEL, C1)
    ("/a\x00b", "control character"),
    ("/a%00b", "control character"),
    ("/a\nb", "control character"),
    ("/a%0d%0aSet-Cookie:x", "control character"),
    ("/a\tb", "control character"),
    ("/a\x7fb", "control character"),
    ("/a%7F", "control character"),
    ("/a%C2%85", "control character"),
    (wire("/a\x85"), "control character"),  # raw octets C2 85
    # characters never allowed raw
    ("/a b", "not allowed"),
    ("/a\\..\\b", "not allowed"),
    ("/a?b", "not allowed"),
    ("/a#b", "not allowed"),
    # invalid escapes
    ("/%zz", "invalid percent-escape"),
    ("/%4", "invalid percent-escape"),
    ("/a%", "invalid percent-escape"),
    ("/%%41", "invalid percent-escape"),
    ("/% 1", "invalid percent-escape"),
    ("/%+1", "invalid percent-escape"),
    # not UTF-8 once decoded, overlong forms included, raw octets too
    ("/%FF", "not UTF-8"),
    ("/a\x85", "not UTF-8"),  # a lone raw octet 0x85
    ("/caf\xe9", "not UTF-8"),  # latin-1 text, not UTF-8
    ("/%C3", "not UTF-8"),
    ("/%C3%28", "not UTF-8"),
    ("/%C0%AE%C0%AE/etc", "not UTF-8"),
    ("/%C0%AF", "not UTF-8"),
    ("/%ED%A0%80", "not UTF-8"),  # an encoded UTF-16 surrogate
    # characters that are not octets: the input is the target decoded as latin-1
    ("/\ud800", "not an octet"),
    ("/😀", "not an octet"),
    ("/\u20ac", "not an octet"),
    # dot segments with ';' parameters (Tomcat resolves '..;' as '..')
    ("/public/..;/admin", "';' parameters"),
    ("/a/.;x/b", "';' parameters"),
    ("/a/%2e%2e;jsessionid=1/b", "';' parameters"),
]


@pytest.mark.parametrize(("raw", "reason"), REJECTED)
def test_rejected(raw: str, reason: str) -> None:
    with pytest.raises(PathRejected, match=reason):
        normalize_path(raw)


def test_path_rejected_is_a_value_error() -> None:
    assert issubclass(PathRejected, ValueError)


def test_common_path_takes_the_fast_path() -> None:
    raw = "/api/v1/users/123"
    assert normalize_path(raw) is raw


@pytest.mark.parametrize(
    ("segment", "expected"),
    [("users", "users"), ("%7euser", "~user"), ("a%2fb", "a%2Fb"), (wire("é"), "%C3%A9"), ("", "")],
)
def test_canonical_segment(segment: str, expected: str) -> None:
    assert canonical_segment(segment) == expected


@pytest.mark.parametrize("segment", ["a/b", "%zz", "%00", "a b"])
def test_canonical_segment_rejects(segment: str) -> None:
    with pytest.raises(PathRejected):
        canonical_segment(segment)


# --- properties ---------------------------------------------------------------------------

#: characters that matter to a normaliser, often
HOSTILE = st.text(alphabet="/.%2eEfF0aA;~\\?#\x00 é\xc3\xa9\x85:", max_size=40)
ANY_PATH = st.one_of(
    st.text(max_size=60),
    st.text(max_size=60).map(lambda s: "/" + s),
    HOSTILE,
    HOSTILE.map(lambda s: "/" + s),
    st.lists(
        st.sampled_from(["", ".", "..", "%2e", "%2E%2e", "a", "%2F", "%41", "..;", "%c3%a9"]),
        max_size=8,
    ).map(lambda segs: "/" + "/".join(segs)),
)


@settings(max_examples=2000, deadline=None)
@given(ANY_PATH)
@example("/a/%2e%2e/%2e%2e")
@example("/%2e./a/")
@example("/a/b/..//")
def test_normalisation_is_idempotent_and_canonical(raw: str) -> None:
    try:
        once = normalize_path(raw)
    except PathRejected:
        event("rejected")
        return  # the only exception it may raise
    event("fast path" if once is raw else "normalised")
    assert normalize_path(once) == once
    assert once.startswith("/")
    assert once.isascii()
    assert "//" not in once
    segments = once.split("/")[1:]
    assert not {".", ".."} & set(segments)
    assert all(s for s in segments[:-1])  # only the last one may be empty (trailing slash)
    # escapes are canonical: upper-case hex, never of an unreserved character
    for piece in once.split("%")[1:]:
        octet = piece[:2]
        assert octet == octet.upper() and all(c in string.hexdigits for c in octet)
        assert chr(int(octet, 16)) not in string.ascii_letters + string.digits + "-._~"
