"""ExpiringLru: what basic-auth, ldap-auth and the ID-token check remember of the credentials
they verified."""

from __future__ import annotations

import pytest

from portico.core.expiring_lru import ExpiringLru


def test_an_entry_is_served_until_it_expires() -> None:
    lru: ExpiringLru[str, str] = ExpiringLru(4)
    lru.put("alice", "consumer-a", expires_at=100.0)
    assert lru.get("alice", now=0.0) == "consumer-a"
    assert lru.get("alice", now=99.5) == "consumer-a"
    assert lru.get("alice", now=100.0) is None  # the expiry instant is already too late
    assert lru.get("alice", now=150.0) is None
    assert lru.get("bob", now=0.0) is None


def test_put_replaces_the_value_and_its_expiry() -> None:
    lru: ExpiringLru[str, str] = ExpiringLru(4)
    lru.put("alice", "old", expires_at=10.0)
    lru.put("alice", "new", expires_at=20.0)
    assert lru.get("alice", now=15.0) == "new"
    assert len(lru) == 1
    lru.put("alice", "shorter", expires_at=5.0)  # an expiry can move back too
    assert lru.get("alice", now=6.0) is None


def test_the_least_recently_used_entry_goes_first_when_full() -> None:
    lru: ExpiringLru[str, int] = ExpiringLru(3)
    for number, key in enumerate("abc"):
        lru.put(key, number, expires_at=100.0)
    assert list(lru) == ["a", "b", "c"]
    assert lru.get("a", now=0.0) == 0  # a read counts as a use: "b" is now the oldest
    assert list(lru) == ["b", "c", "a"]
    lru.put("d", 3, expires_at=100.0)
    assert list(lru) == ["c", "a", "d"]
    assert lru.get("b", now=0.0) is None
    assert (lru.get("c", now=0.0), lru.get("a", now=0.0), lru.get("d", now=0.0)) == (2, 0, 3)


def test_put_on_a_key_there_makes_it_the_most_recently_used() -> None:
    lru: ExpiringLru[str, int] = ExpiringLru(2)
    lru.put("a", 1, expires_at=100.0)
    lru.put("b", 2, expires_at=100.0)
    lru.put("a", 10, expires_at=100.0)  # refreshed: "b" is the oldest now
    lru.put("c", 3, expires_at=100.0)
    assert list(lru) == ["a", "c"]
    assert lru.get("a", now=0.0) == 10


def test_a_miss_or_an_expired_read_is_not_a_use() -> None:
    lru: ExpiringLru[str, int] = ExpiringLru(2)
    lru.put("old", 1, expires_at=10.0)
    lru.put("fresh", 2, expires_at=100.0)
    assert lru.get("old", now=50.0) is None
    assert lru.get("gone", now=50.0) is None
    assert list(lru) == ["old", "fresh"]
    lru.put("new", 3, expires_at=100.0)  # the expired entry is the one evicted
    assert list(lru) == ["fresh", "new"]


def test_the_size_stays_within_the_bound() -> None:
    lru: ExpiringLru[int, int] = ExpiringLru(16)
    for key in range(1000):
        lru.put(key, key, expires_at=100.0)
        assert len(lru) == min(key + 1, 16)
    assert list(lru) == list(range(984, 1000))


def test_discard_forgets_a_key_and_ignores_an_absent_one() -> None:
    lru: ExpiringLru[str, int] = ExpiringLru(2)
    lru.put("a", 1, expires_at=100.0)
    lru.discard("a")
    lru.discard("never there")
    assert lru.get("a", now=0.0) is None
    assert "a" not in lru and len(lru) == 0


def test_a_capacity_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="capacity"):
        ExpiringLru(0)
