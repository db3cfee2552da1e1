"""Which environment a request's Host header names: exact gateway hosts and ``*.`` wildcards,
the answer for each value seen remembered (a keep-alive client sends the same one every time).
"""

from __future__ import annotations

from portico.gateway.environment_runtime import EnvironmentRuntime


class HostTable:
    """Host header → environment. The answer for each Host value seen is remembered (a
    keep-alive client sends the same one every time), up to ``MEMO_SIZE`` values."""

    MEMO_SIZE = 4096

    __slots__ = ("_memo", "exact", "wildcards")

    def __init__(self, exact: dict[str, str], wildcards: list[tuple[str, str]]) -> None:
        self.exact = exact
        self.wildcards = wildcards  # (".example.com", env id), longest suffix first
        self._memo: dict[str, tuple[str, str | None]] = {}

    @classmethod
    def build(cls, environments: dict[str, EnvironmentRuntime]) -> HostTable:
        exact: dict[str, str] = {}
        wildcards: list[tuple[str, str]] = []
        for env_id, runtime in environments.items():
            for host in runtime.snapshot.gateway_hosts:
                if host.startswith("*."):
                    wildcards.append((host[1:], env_id))
                else:
                    exact[host] = env_id
        wildcards.sort(key=lambda item: -len(item[0]))
        return cls(exact, wildcards)

    def find(self, host: str) -> str | None:
        found = self.exact.get(host)
        if found is not None:
            return found
        for suffix, env_id in self.wildcards:
            if host.endswith(suffix) and len(host) > len(suffix):
                return env_id
        return None

    def lookup(self, raw: str) -> tuple[str, str | None]:
        """The host a Host header value names (see :func:`host_of`) and its environment."""
        found = self._memo.get(raw)
        if found is None:
            host = host_of(raw)
            found = (host, self.find(host))
            memo = self._memo
            if len(memo) >= self.MEMO_SIZE:
                memo.clear()  # many distinct Host values: a client making them up
            memo[raw] = found
        return found


def host_of(raw: str) -> str:
    """A Host header without its port, lower-cased (IPv6 literals keep their brackets)."""
    raw = raw.strip().lower()
    if raw.startswith("["):
        return raw.split("]", 1)[0] + "]"
    return raw.rsplit(":", 1)[0] if raw.count(":") == 1 else raw
