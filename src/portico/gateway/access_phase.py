"""The access phase of one request: the route's plugin chain run until a plugin replies, the
chain ends, or a verdict has to be awaited (``Gateway.handle`` goes on from there, at once or
in a coroutine, through the same ``AccessPhase.run``)."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from portico.gateway.context import (
    PluginRuntime,
    Reply,
    RequestContext,
    ResponsePhase,
    phase_plugins,
)
from portico.gateway.environment_runtime import Chain, EnvironmentRuntime, RouteRuntime

if TYPE_CHECKING:
    from portico.gateway.snapshot import SnapshotConsumer


class AccessPhase:
    """Where the access phase of one request is: the chain (replaced once a consumer with
    plugins of its own is known), the next plugin, and the reply if a plugin gave one."""

    __slots__ = ("chain", "consumer", "index", "reply")

    def __init__(self, chain: Chain, consumer: SnapshotConsumer | None) -> None:
        self.chain = chain
        self.index = 0
        self.consumer = consumer
        self.reply: Reply | None = None

    def phases(self, route: RouteRuntime) -> tuple[ResponsePhase, list[PluginRuntime]]:
        """The header filters and loggers of the chain that ran."""
        if self.chain is route.chain:
            return route.response_phase, route.loggers
        return phase_plugins(plugin for _, plugin in self.chain)

    def run(self, env: EnvironmentRuntime, ctx: RequestContext) -> Awaitable[Reply | None] | None:
        """Run the access phase on from ``self.index`` until a plugin replies
        (``self.reply``), the chain ends (None), or a verdict has to be awaited (returned).

        Once an authentication plugin names the consumer, the consumer's own plugins REPLACE
        same-named ones for the rest of the chain (the consumer scope is the narrowest). A
        reply ends the access phase only: as in APISIX, every plugin of the chain still sees
        the response and logs it (CORS headers on a 401, the 401 in the metrics)."""
        while self.index < len(self.chain):
            plugin = self.chain[self.index][1]
            self.index += 1
            verdict = plugin.access(ctx)
            if verdict is None:
                self.consumer_known(env, ctx)
            elif isinstance(verdict, Reply):
                self.reply = verdict
                return None
            else:
                return verdict
        return None

    def consumer_known(self, env: EnvironmentRuntime, ctx: RequestContext) -> None:
        """After a plugin let the request through: if it named a new consumer, that consumer's
        plugins replace same-named ones among the rest of the chain."""
        consumer = ctx.consumer
        if consumer is self.consumer or consumer is None:
            return
        self.consumer = consumer
        own = env.consumer_chains.get(consumer.username)
        if own:
            chain, index = self.chain, self.index
            names = {a.name for a, _ in own} | {chain[index - 1][0].name}
            kept = [item for item in chain[index:] if item[0].name not in names]
            rest = sorted(kept + own, key=lambda item: (item[0].order, item[0].name))
            self.chain = chain[:index] + rest  # a new list: the route's is shared
