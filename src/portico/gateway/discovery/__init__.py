"""Upstream service discovery: an upstream whose ``specification`` has ``discovery: {type,
serviceName}`` instead of ``nodes`` gets its nodes at run time, from a *source*.

The parts:

- ``base``: the interface a source implements (:class:`~.base.Source`: ``resolve()`` →
  :class:`~.base.Resolution`, the nodes and how long they may be used, or
  :class:`~.base.DiscoveryFailed`), and what a source module exports
  (:class:`~.base.SourceSpec`: its type, how its ``serviceName`` is checked, how a source is
  made for one upstream);
- ``catalogue``: every source module of ``sources/`` (found, not listed), and the check the
  management service applies to ``discovery`` when an upstream is written;
- ``watch``: one :class:`~.watch.DiscoveredUpstream` per discovered upstream, which resolves
  it off the request path, again when the answer's TTL runs out (held within the node's
  bounds), keeps the last good answer through failures and empty answers, and hands each
  change to its listener (the upstream's runtime: balancer, health checker); and
  :class:`~.watch.Discovery`, the gateway's set of them, kept across config snapshots while
  an upstream's discovery is unchanged.

Adding a source (Consul, Kubernetes) is one module in ``sources/`` exporting
``SOURCE = SourceSpec(...)``: see ``sources/dns.py``.
"""
