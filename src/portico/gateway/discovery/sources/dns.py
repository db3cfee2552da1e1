"""``discovery: {type: "dns", serviceName}``: the nodes are what DNS answers for a name.

``serviceName`` is one of:

- ``name:port`` — the A and AAAA records of ``name``, every address on ``port``, each of
  weight 1 and priority 0;
- an SRV name, ``_service._proto.name`` (``_http._tcp.orders.internal``) — each record names a
  target, its port, its priority and its weight (RFC 2782). A record's nodes are the target's
  addresses (from the answer's additional section, else its own A and AAAA records). The
  lowest SRV priority is preferred and the others take traffic only when all of its nodes are
  down: a node's priority is the record's, negated (the balancer prefers the highest).
  Weights share traffic within a priority: a node's weight is the record's × 100, divided
  among the target's addresses; a record of weight 0 among weighted ones gets 1 (RFC 2782's
  "very small chance" of selection), and when every record of a priority weighs 0 they share
  it equally. A target of "." (the service is not offered there) has no nodes.

The answer is used for its TTL: the smallest of the records it was made of (CNAMEs
included). Queries go to ``PORTICO_GATEWAY_RESOLVERS`` (the node's setting), else to the
system's resolvers (``/etc/resolv.conf``), through one c-ares channel per gateway (aiodns):
c-ares runs the exchanges on its own thread, so the event loop only receives the answers.
A name that does not exist, or has no record of the type (NXDOMAIN, NODATA), is an empty
answer; a timeout, a refusal or a server failure is :class:`DiscoveryFailed`. Either way the
watcher keeps the last good nodes.

What runs on the event loop is paced (``context.pause()`` before each step): issuing one
query, reading 64 records, handling 64 addresses of SRV targets, making 64 nodes. An answer
gives at most ``MAX_NODES`` nodes: the first addresses of an A/AAAA answer in address order,
the records of the preferred SRV priorities first. An SRV name's targets without addresses in
the additional section are looked up :data:`TARGETS_AT_ONCE` at a time.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

import aiodns
import aiodns.error
import pycares

from portico.gateway.balancing.nodes import Node
from portico.gateway.discovery.base import (
    MAX_NODES,
    DiscoveryContext,
    DiscoveryFailed,
    Resolution,
    Source,
    SourceSpec,
)

__all__ = ["SOURCE", "DnsName", "DnsSource", "check_service_name", "parse", "srv_nodes"]

#: seconds c-ares waits for one server's answer, and how many times it asks each server
QUERY_TIMEOUT: Final = 2.0
QUERY_TRIES: Final = 2
#: a weight-1 SRV record's share; a weight-0 record among weighted ones gets 1 of it
WEIGHT_SCALE: Final = 100
#: records, addresses or nodes handled in one step of work on the event loop
STEP: Final = 64
#: an SRV name's targets looked up at once (each an A and an AAAA query)
TARGETS_AT_ONCE: Final = 4

_LABEL: Final = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_SERVICE_LABEL: Final = re.compile(r"_[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_PORT: Final = re.compile(r"[1-9][0-9]{0,4}")
_NO_RECORDS: Final = frozenset({pycares.errno.ARES_ENOTFOUND, pycares.errno.ARES_ENODATA})

T = TypeVar("T")

_EXAMPLES: Final = "'orders.internal:8080' (A/AAAA records) or '_http._tcp.orders.internal' (SRV)"


@dataclass(frozen=True, slots=True)
class DnsName:
    """A checked ``serviceName``: the name queried, and the port of an A/AAAA name (None for
    an SRV name, whose records give the ports)."""

    name: str
    port: int | None

    @property
    def srv(self) -> bool:
        return self.port is None


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return False
    return True


def _dns_name(labels: Sequence[str]) -> bool:
    return bool(labels) and all(_LABEL.fullmatch(label) for label in labels)


def parse(service_name: str) -> DnsName:
    """``service_name`` read, or ``ValueError`` saying what is wrong with it."""
    host, colon, port = service_name.rpartition(":")
    if not colon:
        host = service_name
    if _is_address(host) or _is_address(service_name):
        raise ValueError(
            "must be a DNS name, not an IP address (list addresses under nodes instead); "
            f"e.g. {_EXAMPLES}"
        )
    host = host.removesuffix(".")  # a fully qualified name's final dot: queries are absolute
    if len(host) > 253:
        raise ValueError("must be a DNS name of at most 253 characters")
    labels = host.split(".")
    srv = len(labels) >= 3 and labels[0].startswith("_") and labels[1].startswith("_")
    if srv:
        if colon:
            raise ValueError(
                "an SRV name takes its ports from its records: remove ':port' "
                "(or name A/AAAA records with 'name:port')"
            )
        if not (
            _SERVICE_LABEL.fullmatch(labels[0])
            and _SERVICE_LABEL.fullmatch(labels[1])
            and _dns_name(labels[2:])
        ):
            raise ValueError(f"must be a DNS name; e.g. {_EXAMPLES}")
        return DnsName(host, None)
    if not _dns_name(labels):
        raise ValueError(f"must be a DNS name; e.g. {_EXAMPLES}")
    if not colon:
        raise ValueError(
            "an A/AAAA name needs the port of its nodes ('name:port'), and an SRV name "
            f"starts with '_service._proto.'; e.g. {_EXAMPLES}"
        )
    if _PORT.fullmatch(port) is None or int(port) > 65535:
        raise ValueError("must end with a port from 1 to 65535 after ':'")
    return DnsName(host, int(port))


def check_service_name(service_name: str) -> str:
    """The ``serviceName`` as stored: as given, once :func:`parse` accepts it."""
    parse(service_name)
    return service_name


# --- answers → nodes ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SrvRecord:
    priority: int
    weight: int
    port: int
    target: str


Pause = Callable[[], Awaitable[None]]


async def _no_pause() -> None:
    return None


class _Steps:
    """Counts work and pauses before each :data:`STEP` units of it."""

    __slots__ = ("done", "pause")

    def __init__(self, pause: Pause) -> None:
        self.pause = pause
        self.done = STEP  # the first unit pauses

    async def take(self, units: int = 1) -> None:
        if self.done >= STEP:
            await self.pause()
            self.done = 0
        self.done += units


async def make_nodes(
    entries: Iterable[tuple[str, int, int, int]], pause: Pause
) -> tuple[Node, ...]:
    """``Node(host, port, weight, priority)`` of each entry, :data:`STEP` a step."""
    steps = _Steps(pause)
    nodes: list[Node] = []
    for host, port, weight, priority in entries:
        await steps.take()
        nodes.append(Node(host=host, port=port, weight=weight, priority=priority))
    return tuple(nodes)


async def srv_nodes(
    records: Sequence[SrvRecord], addresses: dict[str, list[str]], pause: Pause = _no_pause
) -> tuple[Node, ...]:
    """The nodes of SRV ``records``, each target's addresses taken from ``addresses``
    (lower-cased target → its addresses): the rules of the module's docstring. An address
    reached through two records is one node: the preferred priority's, weights added. At
    most ``MAX_NODES``, those of the preferred priorities first."""
    steps = _Steps(pause)
    weighted: set[int] = set()
    for record in records:
        await steps.take()
        if record.weight > 0 and addresses.get(record.target.lower()):
            weighted.add(record.priority)
    # (host, port) → [weight, negated priority]: the preferred priority comes first
    found: dict[tuple[str, int], list[int]] = {}
    for record in sorted(records, key=lambda r: r.priority):
        hosts = addresses.get(record.target.lower(), [])
        await steps.take(len(hosts) + 1)
        if not hosts:
            continue
        if record.weight > 0:
            share = max(1, round(record.weight * WEIGHT_SCALE / len(hosts)))
        elif record.priority in weighted:
            share = 1  # "a very small chance of being selected" (RFC 2782)
        else:
            share = max(1, round(WEIGHT_SCALE / len(hosts)))  # all weigh 0: equal chances
        for host in hosts:
            known = found.get((host, record.port))
            if known is None:
                if len(found) < MAX_NODES:
                    found[(host, record.port)] = [share, -record.priority]
            elif known[1] == -record.priority:
                known[0] += share
    await pause()
    entries = sorted((-p, host, port, w) for (host, port), (w, p) in found.items())
    return await make_nodes(((h, port, w, -p) for p, h, port, w in entries), pause)


# --- the source -----------------------------------------------------------------------------


def _resolver(context: DiscoveryContext) -> aiodns.DNSResolver:
    """The gateway's one c-ares channel (made on first use, from the event loop)."""

    def make() -> aiodns.DNSResolver:
        return aiodns.DNSResolver(
            nameservers=list(context.resolvers) or None,
            timeout=QUERY_TIMEOUT,
            tries=QUERY_TRIES,
        )

    async def close(resolver: aiodns.DNSResolver) -> None:
        await resolver.close()

    return context.shared.get("dns", make, close)


class _Answer:
    """What one query brought: the addresses (A, AAAA) or the services (SRV) it asked for,
    the TTL of every record of the answer (CNAMEs included), and the addresses the
    additional section gave for other names (lower-cased name → addresses)."""

    __slots__ = ("addresses", "glue", "services", "ttls")

    def __init__(self) -> None:
        self.addresses: list[str] = []
        self.services: list[SrvRecord] = []
        self.ttls: list[int] = []
        self.glue: dict[str, list[str]] = {}


async def _query(resolver: aiodns.DNSResolver, name: str, qtype: str, pause: Pause) -> _Answer:
    """One query's answer; at most ``MAX_NODES`` addresses of it are read."""
    answer = _Answer()
    await pause()  # issuing the query is c-ares' work on the loop
    try:
        result = await resolver.query_dns(name + ".", qtype)  # absolute: no search domains
    except aiodns.error.DNSError as error:
        code = error.args[0] if error.args else None
        if code in _NO_RECORDS:
            return answer
        reason = error.args[1] if len(error.args) > 1 else "failed"
        raise DiscoveryFailed(f"{qtype} {name}: {reason}") from None
    steps = _Steps(pause)
    for record in result.answer:
        await steps.take()
        answer.ttls.append(record.ttl)
        data = record.data
        if isinstance(data, pycares.ARecordData | pycares.AAAARecordData):
            answer.addresses.append(data.addr)
        elif isinstance(data, pycares.SRVRecordData) and data.target.rstrip("."):
            # (a target of "." says the service is not offered there)
            target = data.target.rstrip(".")
            answer.services.append(SrvRecord(data.priority, data.weight, data.port, target))
        if len(answer.addresses) >= MAX_NODES or len(answer.services) >= MAX_NODES:
            break  # (the records read give the TTL)
    glued = 0
    for record in result.additional:
        await steps.take()
        data = record.data
        if isinstance(data, pycares.ARecordData | pycares.AAAARecordData) and glued < MAX_NODES:
            answer.glue.setdefault(record.name.rstrip(".").lower(), []).append(data.addr)
            answer.ttls.append(record.ttl)
            glued += 1
    return answer


async def _all(queries: Sequence[Awaitable[T]]) -> list[T]:
    """Every query's answer, or the first failure once all have ended (none left running)."""
    outcomes = await asyncio.gather(*queries, return_exceptions=True)
    answers: list[T] = []
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
        answers.append(outcome)
    return answers


async def _addresses(resolver: aiodns.DNSResolver, name: str, pause: Pause) -> list[_Answer]:
    """The A and the AAAA answers of ``name``."""
    return await _all([_query(resolver, name, "A", pause), _query(resolver, name, "AAAA", pause)])


class DnsSource(Source):
    def __init__(self, name: DnsName, context: DiscoveryContext) -> None:
        self.name = name
        self.context = context

    async def resolve(self) -> Resolution:
        resolver = _resolver(self.context)
        pause = self.context.pause
        if self.name.port is None:
            return await self._srv(resolver, self.name.name, pause)
        port = self.name.port
        answers = await _addresses(resolver, self.name.name, pause)
        await pause()
        hosts = sorted({host for answer in answers for host in answer.addresses})[:MAX_NODES]
        nodes = await make_nodes(((host, port, 1, 0) for host in hosts), pause)
        return Resolution(nodes, _ttl(answers) if nodes else None)

    @staticmethod
    async def _srv(resolver: aiodns.DNSResolver, name: str, pause: Pause) -> Resolution:
        answer = await _query(resolver, name, "SRV", pause)
        if not answer.services:
            return Resolution(())
        used = [answer]
        addresses = {target: sorted(hosts) for target, hosts in answer.glue.items()}
        missing = sorted({r.target.lower() for r in answer.services} - set(addresses))
        for first in range(0, len(missing), TARGETS_AT_ONCE):
            targets = missing[first : first + TARGETS_AT_ONCE]
            looked_up = await _all([_addresses(resolver, target, pause) for target in targets])
            for target, pair in zip(targets, looked_up, strict=True):
                used.extend(pair)
                addresses[target] = sorted({host for part in pair for host in part.addresses})
        nodes = await srv_nodes(answer.services, addresses, pause)
        return Resolution(nodes, _ttl(used) if nodes else None)


def _ttl(answers: Sequence[_Answer]) -> float | None:
    ttls = [ttl for answer in answers for ttl in answer.ttls]
    return float(min(ttls)) if ttls else None


def _source(service_name: str, context: DiscoveryContext) -> Source:
    return DnsSource(parse(service_name), context)


SOURCE = SourceSpec(
    type="dns",
    description="DNS: 'name:port' for A/AAAA records, or an SRV name "
    "('_http._tcp.name') whose records give each target's port, priority and weight.",
    check=check_service_name,
    source=_source,
)
