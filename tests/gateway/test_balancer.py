"""The balancer: smooth weighted round robin, consistent hashing and its key sources,
least connections, peak EWMA, priorities, weight 0, health, panic mode and retries."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from portico.gateway.balancing.algorithms import ConsistentHash
from portico.gateway.balancing.balancer import Balancer
from portico.gateway.balancing.hash_key import HashKey, cookie_value
from portico.gateway.balancing.nodes import Node, PickContext, nodes_of
from portico.gateway.health.checker import HealthChecker

CTX = PickContext(client_ip="192.0.2.10")


class FakeHealth:
    """A health view whose unhealthy nodes the test chooses (by port)."""

    def __init__(self, down: Iterable[int] = ()) -> None:
        self.down = set(down)

    def healthy(self, node: Node) -> bool:
        return node.port not in self.down


def spec(*nodes: tuple[int, int] | tuple[int, int, int], **extra: Any) -> dict[str, Any]:
    """A specification of nodes (port, weight[, priority]) on 10.0.0.1."""
    return {
        "nodes": [
            {
                "host": "10.0.0.1",
                "port": n[0],
                "weight": n[1],
                "priority": n[2] if len(n) > 2 else 0,
            }
            for n in nodes
        ],
        **extra,
    }


def ports(balancer: Balancer, count: int, ctx: PickContext = CTX) -> list[int]:
    picked = []
    for _ in range(count):
        node = balancer.pick(ctx)
        assert node is not None
        picked.append(node.port)
    return picked


# --- building ---------------------------------------------------------------------------


def test_build_reads_the_specification_nodes() -> None:
    specification = spec((80, 5, 1), (81, 0, 0))
    assert nodes_of(specification) == [
        Node("10.0.0.1", 80, 5, 1),
        Node("10.0.0.1", 81, 0, 0),
    ]
    balancer = Balancer.build(specification, FakeHealth())
    assert balancer.type == "roundrobin"
    assert balancer.nodes == (Node("10.0.0.1", 80, 5, 1), Node("10.0.0.1", 81, 0, 0))


def test_discovery_upstreams_take_the_resolved_nodes() -> None:
    specification = {"discovery": {"type": "dns", "serviceName": "api.internal:8080"}}
    assert Balancer.build(specification, FakeHealth()).pick(CTX) is None
    resolved = [Node("10.1.0.1", 8080), Node("10.1.0.2", 8080)]
    balancer = Balancer.build(specification, FakeHealth(), nodes=resolved)
    assert {balancer.pick(CTX) for _ in range(4)} == set(resolved)


def test_ipv6_node_address_has_brackets() -> None:
    assert Node("::1", 8080).address == "[::1]:8080"
    assert Node("example.com", 443).address == "example.com:443"


# --- smooth weighted round robin ------------------------------------------------------------


def test_smooth_wrr_spreads_5_1_1_as_nginx_does() -> None:
    balancer = Balancer.build(spec((1, 5), (2, 1), (3, 1)), FakeHealth())
    letters = {1: "a", 2: "b", 3: "c"}
    sequence = "".join(letters[port] for port in ports(balancer, 14))
    assert sequence == "aabacaa" * 2


def test_smooth_wrr_shares_match_weights_exactly_over_a_cycle() -> None:
    balancer = Balancer.build(spec((1, 3), (2, 2), (3, 1)), FakeHealth())
    assert Counter(ports(balancer, 600)) == {1: 300, 2: 200, 3: 100}


def test_weight_zero_is_never_picked() -> None:
    balancer = Balancer.build(spec((1, 0), (2, 1)), FakeHealth())
    assert set(ports(balancer, 20)) == {2}
    idle = Balancer.build(spec((1, 0), (2, 0)), FakeHealth())
    assert idle.pick(CTX) is None
    assert not idle.panic


def test_unhealthy_nodes_get_no_traffic_and_come_back() -> None:
    health = FakeHealth(down={1})
    balancer = Balancer.build(spec((1, 5), (2, 1), (3, 1)), health)
    assert Counter(ports(balancer, 100)) == {2: 50, 3: 50}
    assert not balancer.panic
    health.down.clear()
    assert Counter(ports(balancer, 700)) == {1: 500, 2: 100, 3: 100}


# --- priorities, panic, retries -----------------------------------------------------------


def test_priority_lower_nodes_only_when_every_higher_one_is_out() -> None:
    health = FakeHealth()
    balancer = Balancer.build(spec((1, 1, 10), (2, 1, 10), (3, 5, 0)), health)
    assert set(ports(balancer, 20)) == {1, 2}
    health.down = {1}
    assert set(ports(balancer, 20)) == {2}
    health.down = {1, 2}
    assert set(ports(balancer, 20)) == {3}
    assert not balancer.panic
    health.down = set()
    node2 = Node("10.0.0.1", 2, 1, 10)
    node1 = Node("10.0.0.1", 1, 1, 10)
    fallback = balancer.pick(CTX, exclude=[node1, node2])
    assert fallback is not None and fallback.port == 3


def test_negative_priorities_order_too() -> None:
    balancer = Balancer.build(spec((1, 1, -5), (2, 1, -1)), FakeHealth())
    assert set(ports(balancer, 10)) == {2}


def test_panic_mode_when_every_node_is_unhealthy() -> None:
    health = FakeHealth(down={1, 2, 3})
    balancer = Balancer.build(spec((1, 2), (2, 1), (3, 1)), health)
    assert balancer.panic
    # as if healthy: the weighted round robin over all of them
    assert Counter(ports(balancer, 40)) == {1: 20, 2: 10, 3: 10}
    assert balancer.panic_picks == 40
    health.down = {1, 2}
    assert not balancer.panic
    assert set(ports(balancer, 10)) == {3}
    assert balancer.panic_picks == 40
    assert balancer.snapshot()["panic"] is False


def test_panic_mode_still_honours_priority_and_exclude() -> None:
    health = FakeHealth(down={1, 2, 3})
    balancer = Balancer.build(spec((1, 1, 1), (2, 1, 1), (3, 1, 0)), health)
    assert set(ports(balancer, 10)) == {1, 2}
    first = balancer.pick(CTX)
    assert first is not None
    second = balancer.pick(CTX, exclude=[first])
    assert second is not None and second.port == ({1, 2} - {first.port}).pop()
    third = balancer.pick(CTX, exclude=[first, second])
    assert third is not None and third.port == 3
    assert balancer.pick(CTX, exclude=[first, second, third]) is None


def test_exclude_gives_each_retry_another_node() -> None:
    balancer = Balancer.build(spec((1, 1), (2, 1), (3, 1)), FakeHealth())
    tried: list[Node] = []
    for _ in range(3):
        node = balancer.pick(CTX, exclude=tried)
        assert node is not None and node not in tried
        tried.append(node)
    assert balancer.pick(CTX, exclude=tried) is None


def test_retries_do_not_go_to_unhealthy_nodes_while_one_is_healthy() -> None:
    balancer = Balancer.build(spec((1, 1), (2, 1), (3, 1)), FakeHealth(down={2, 3}))
    first = balancer.pick(CTX)
    assert first is not None and first.port == 1
    assert balancer.pick(CTX, exclude=[first]) is None
    assert not balancer.panic


@settings(max_examples=150, deadline=None)
@given(
    layout=st.lists(
        st.tuples(st.integers(0, 5), st.integers(-2, 2), st.booleans(), st.booleans()),
        min_size=1,
        max_size=8,
    ),
    algorithm=st.sampled_from(["roundrobin", "chash", "least_conn", "ewma"]),
    client=st.integers(0, 1000),
)
def test_picks_respect_weight_health_priority_and_exclude(
    layout: list[tuple[int, int, bool, bool]], algorithm: str, client: int
) -> None:
    """Any layout: a weighted, non-excluded node of the best eligible priority; healthy unless
    none is (panic); None only when nothing is left."""
    nodes = [Node("10.0.0.1", port, w, p) for port, (w, p, _, _) in enumerate(layout, 1)]
    down = {n.port for n, (_, _, up, _) in zip(nodes, layout, strict=True) if not up}
    exclude = [n for n, (_, _, _, ex) in zip(nodes, layout, strict=True) if ex]
    specification: dict[str, Any] = {"type": algorithm}
    if algorithm == "chash":
        specification |= {"hashOn": "vars", "key": "remote_addr"}
    balancer = Balancer.build(specification, FakeHealth(down), nodes=nodes)
    weighted = [n for n in nodes if n.weight > 0]
    panic = bool(weighted) and all(n.port in down for n in weighted)
    eligible = [n for n in weighted if (panic or n.port not in down) and n not in exclude]
    for _ in range(3):
        node = balancer.pick(PickContext(client_ip=f"198.51.100.{client % 256}"), exclude=exclude)
        assert balancer.panic == panic
        if not eligible:
            assert node is None
            continue
        assert node in eligible
        assert node.priority == max(n.priority for n in eligible)


# --- consistent hashing -------------------------------------------------------------------


def chash_owner(ring_nodes: list[Node], keys: list[str]) -> dict[str, Node | None]:
    ring = ConsistentHash(ring_nodes, HashKey("vars", "remote_addr"))
    return {key: ring.owner(key) for key in keys}


def test_chash_same_key_same_node_and_keys_spread() -> None:
    balancer = Balancer.build(
        spec(*[(p, 1) for p in range(1, 6)], type="chash", hashOn="vars", key="remote_addr"),
        FakeHealth(),
    )
    for ip in ("192.0.2.1", "192.0.2.2", "203.0.113.9"):
        ctx = PickContext(client_ip=ip)
        assert len({balancer.pick(ctx) for _ in range(10)}) == 1
    spread: Counter[int] = Counter()
    for i in range(2000):
        spread.update(ports(balancer, 1, PickContext(client_ip=f"10.9.{i // 256}.{i % 256}")))
    assert set(spread) == {1, 2, 3, 4, 5}
    assert min(spread.values()) > 2000 / 5 * 0.6


def test_chash_adding_a_node_moves_about_one_nth_of_keys_only_to_it() -> None:
    keys = [f"user-{i}" for i in range(10_000)]
    ten = [Node(f"10.0.0.{i}", 80) for i in range(1, 11)]
    eleventh = Node("10.0.0.11", 80)
    before = chash_owner(ten, keys)
    after = chash_owner([*ten, eleventh], keys)
    moved = [key for key in keys if before[key] != after[key]]
    assert all(after[key] == eleventh for key in moved)
    assert 0.04 < len(moved) / len(keys) < 0.15  # ideal: 1/11 ≈ 0.09


def test_chash_removing_a_node_moves_only_its_keys() -> None:
    keys = [f"session-{i}" for i in range(10_000)]
    ten = [Node(f"10.0.0.{i}", 80) for i in range(1, 11)]
    before = chash_owner(ten, keys)
    after = chash_owner(ten[1:], keys)
    moved = [key for key in keys if before[key] != after[key]]
    assert moved and all(before[key] == ten[0] for key in moved)
    assert 0.04 < len(moved) / len(keys) < 0.16  # ideal: 1/10


def test_chash_virtual_nodes_follow_weight() -> None:
    keys = [f"k{i}" for i in range(20_000)]
    owners = Counter(chash_owner([Node("a", 1, 1), Node("b", 1, 3)], keys).values())
    assert 0.65 < owners[Node("b", 1, 3)] / len(keys) < 0.85  # ideal 0.75


def test_chash_unhealthy_owner_hands_its_keys_on_and_others_keep_theirs() -> None:
    health = FakeHealth()
    balancer = Balancer.build(
        spec(*[(p, 1) for p in range(1, 6)], type="chash", hashOn="header", key="X-User"),
        health,
    )
    contexts = [PickContext("192.0.2.1", headers={"x-user": f"u{i}"}) for i in range(500)]
    before = [balancer.pick(ctx) for ctx in contexts]
    health.down = {3}
    after = [balancer.pick(ctx) for ctx in contexts]
    for old, new in zip(before, after, strict=True):
        assert new is not None and new.port != 3
        if old is not None and old.port != 3:
            assert new == old


@pytest.mark.parametrize(
    ("hash_on", "key", "ctx", "expected"),
    [
        ("vars", "remote_addr", PickContext("192.0.2.7"), "192.0.2.7"),
        ("vars", "$remote_addr", PickContext("192.0.2.7"), "192.0.2.7"),
        ("vars", "uri", PickContext("192.0.2.7", vars={"uri": "/a/b"}), "/a/b"),
        ("vars", "arg_user", PickContext("192.0.2.7", args={"user": "ann"}), "ann"),
        ("vars", "http_x_user_id", PickContext("192.0.2.7", headers={"x-user-id": "42"}), "42"),
        ("vars", "cookie_sid", PickContext("192.0.2.7", headers={"cookie": "a=1; sid=xyz"}), "xyz"),
        ("vars", "consumer_name", PickContext("192.0.2.7", consumer="acme"), "acme"),
        ("header", "X-Tenant", PickContext("192.0.2.7", headers={"x-tenant": "t1"}), "t1"),
        ("cookie", "sid", PickContext("192.0.2.7", headers={"cookie": 'sid="q"; b=2'}), "q"),
        ("consumer", None, PickContext("192.0.2.7", consumer="acme"), "acme"),
        (
            "vars_combinations",
            "$remote_addr$uri",
            PickContext("192.0.2.7", vars={"uri": "/x"}),
            "192.0.2.7/x",
        ),
        (
            "vars_combinations",
            "${host}-${arg_id}",
            PickContext("192.0.2.7", args={"id": "9"}, vars={"host": "h.example"}),
            "h.example-9",
        ),
    ],
)
def test_chash_key_sources(hash_on: str, key: str | None, ctx: PickContext, expected: str) -> None:
    hash_key = HashKey(hash_on, key)
    assert hash_key(ctx) == expected
    assert hash_key.fallbacks == 0


@pytest.mark.parametrize(
    ("hash_on", "key"),
    [
        ("vars", "arg_user"),
        ("vars", "uri"),
        ("vars", "http_x_user"),
        ("header", "X-User"),
        ("cookie", "sid"),
        ("consumer", None),
        ("vars_combinations", "$arg_a$cookie_b"),
    ],
)
def test_chash_missing_key_material_falls_back_to_the_client_address(
    hash_on: str, key: str | None
) -> None:
    hash_key = HashKey(hash_on, key)
    ctx = PickContext("203.0.113.5", headers={"cookie": "other=1"}, vars={"uri": ""})
    assert hash_key(ctx) == "203.0.113.5"
    assert hash_key.fallbacks == 1


def test_chash_balancer_hashes_on_the_configured_header() -> None:
    balancer = Balancer.build(
        spec(*[(p, 1) for p in range(1, 9)], type="chash", hashOn="header", key="X-User"),
        FakeHealth(),
    )
    same_client = [PickContext("192.0.2.1", headers={"x-user": f"u{i}"}) for i in range(200)]
    assert len({balancer.pick(ctx) for ctx in same_client}) > 4
    one_user = [PickContext(f"192.0.2.{i}", headers={"x-user": "u1"}) for i in range(50)]
    assert len({balancer.pick(ctx) for ctx in one_user}) == 1


def test_cookie_value_parsing() -> None:
    assert cookie_value({"cookie": "a=1;b = 2 ; c"}, "b") == "2"
    assert cookie_value({"cookie": "a=1"}, "b") is None
    assert cookie_value({}, "a") is None


# --- least connections --------------------------------------------------------------------


def test_least_conn_ties_round_robin() -> None:
    balancer = Balancer.build(spec((1, 1), (2, 1), (3, 1), type="least_conn"), FakeHealth())
    assert ports(balancer, 6) == [1, 2, 3, 1, 2, 3]


def test_least_conn_prefers_fewest_in_flight_relative_to_weight() -> None:
    balancer = Balancer.build(spec((1, 2), (2, 1), type="least_conn"), FakeHealth())
    for _ in range(30):
        node = balancer.pick(CTX)
        assert node is not None
        balancer.started(node)
    in_flight = {n["port"]: n["in_flight"] for n in balancer.snapshot()["nodes"]}
    assert in_flight == {1: 20, 2: 10}
    # finishing requests on node 1 makes it the least loaded
    node1 = Node("10.0.0.1", 1, 2, 0)
    for _ in range(6):
        balancer.finished(node1, 0.01, True)
    assert ports(balancer, 1) == [1]


def test_started_and_finished_ignore_foreign_nodes() -> None:
    balancer = Balancer.build(spec((1, 1), type="least_conn"), FakeHealth())
    stranger = Node("10.9.9.9", 1)
    balancer.started(stranger)
    balancer.finished(stranger, 1.0, False)
    balancer.finished(Node("10.0.0.1", 1, 1, 0), 1.0, True)  # more finishes than starts
    assert balancer.snapshot()["nodes"][0]["in_flight"] == 0


def test_previous_balancer_figures_carry_over() -> None:
    old = Balancer.build(spec((1, 1), (2, 1), type="least_conn"), FakeHealth())
    busy = Node("10.0.0.1", 1, 1, 0)
    for _ in range(3):
        old.started(busy)
    new = Balancer.build(spec((1, 1), (2, 1), type="least_conn"), FakeHealth(), previous=old)
    assert ports(new, 2) == [2, 2]
    for _ in range(3):
        old.finished(busy, 0.01, True)  # requests started on the old snapshot end there
    assert {n["port"]: n["in_flight"] for n in new.snapshot()["nodes"]} == {1: 0, 2: 0}


# --- peak EWMA ----------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_ewma_prefers_the_faster_node() -> None:
    clock = FakeClock()
    balancer = Balancer.build(spec((1, 1), (2, 1), type="ewma"), FakeHealth(), clock=clock)
    latency = {1: 0.050, 2: 0.010}
    picked: Counter[int] = Counter()
    for _ in range(1000):
        node = balancer.pick(CTX)
        assert node is not None
        picked[node.port] += 1
        balancer.started(node)
        clock.now += latency[node.port]
        balancer.finished(node, latency[node.port], True)
    assert picked[2] > 0.8 * 1000
    assert picked[1] >= 1  # measured at least once
    estimates = {n["port"]: n["ewma_seconds"] for n in balancer.snapshot()["nodes"]}
    assert estimates[2] < estimates[1]


def test_ewma_weighs_in_flight_requests() -> None:
    clock = FakeClock()
    balancer = Balancer.build(spec((1, 1), (2, 1), type="ewma"), FakeHealth(), clock=clock)
    fast, slow = Node("10.0.0.1", 1, 1, 0), Node("10.0.0.1", 2, 1, 0)
    for measured, seconds in ((fast, 0.01), (slow, 0.05)):
        balancer.started(measured)
        balancer.finished(measured, seconds, True)
    picks = []
    for _ in range(12):  # nothing finishes: the fast node's queue grows
        node = balancer.pick(CTX)
        assert node is not None
        balancer.started(node)
        picks.append(node.port)
    # 0.01 × (in_flight + 1) reaches 0.05 with four requests in flight
    assert picks[:4] == [1] * 4
    assert 2 in picks


def test_ewma_sends_one_request_to_an_unmeasured_node_then_waits_for_it() -> None:
    clock = FakeClock()
    balancer = Balancer.build(spec((1, 1), (2, 1), type="ewma"), FakeHealth(), clock=clock)
    known = Node("10.0.0.1", 1, 1, 0)
    balancer.started(known)
    balancer.finished(known, 0.2, True)
    new = balancer.pick(CTX)
    assert new is not None and new.port == 2
    balancer.started(new)
    assert ports(balancer, 3) == [1, 1, 1]


def test_ewma_peak_decay_and_failures() -> None:
    clock = FakeClock()
    balancer = Balancer.build(spec((1, 1), (2, 1), type="ewma"), FakeHealth(), clock=clock)
    a, b = Node("10.0.0.1", 1, 1, 0), Node("10.0.0.1", 2, 1, 0)
    for measured in (a, b):
        balancer.started(measured)
        balancer.finished(measured, 0.02, True)
    balancer.started(a)
    balancer.finished(a, 0.5, True)  # one slow response counts at once (peak)
    assert ports(balancer, 3) == [2, 2, 2]
    balancer.started(b)
    balancer.finished(b, 0.001, ok=False)  # a fast failure does not look fast
    estimates = {n["port"]: n["ewma_seconds"] for n in balancer.snapshot()["nodes"]}
    assert estimates[2] >= 0.1
    # node 1 is idle: its estimate decays towards zero while node 2 keeps being measured,
    # so node 1 is tried again after a while
    for _ in range(2000):
        node = balancer.pick(CTX)
        assert node is not None
        if node == a:
            break
        balancer.started(b)
        clock.now += 0.1
        balancer.finished(b, 0.02, True)
    else:
        pytest.fail("the idle node was never tried again")
    assert clock.now - 1000.0 > 10  # not before its estimate had decayed


# --- with a real health checker -------------------------------------------------------------


def test_balancer_follows_passive_health_changes() -> None:
    specification = spec(
        (1, 1),
        (2, 1),
        checks={"passive": {"unhealthy": {"http_failures": 2, "http_statuses": [500]}}},
    )
    checker = HealthChecker("up-1", specification)
    balancer = Balancer.build(specification, checker)
    node1 = Node("10.0.0.1", 1, 1, 0)
    assert set(ports(balancer, 4)) == {1, 2}
    checker.report(node1, status=500)
    checker.report(node1, status=500)
    assert set(ports(balancer, 10)) == {2}
    checker.report(Node("10.0.0.1", 2, 1, 0), tcp_failure=True)
    checker.report(Node("10.0.0.1", 2, 1, 0), tcp_failure=True)
    assert balancer.panic
    assert set(ports(balancer, 4)) == {1, 2}
