"""Time to first byte of a streamed chat completion: straight from the provider, and through
a Portico gateway whose route has ai-proxy, on the same run.

The provider is the tests' OpenAI-compatible server (``tests/support/openai_server.py``): it
sends its first SSE chunk at once and the next ones ``--delay`` seconds apart, so a gateway
that buffered the stream would show a first byte near the last one. Medians are printed,
never asserted.

    PYTHONPATH=src .venv/bin/python bench/bench_ai_ttfb.py [--requests 50] [--delay 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from portico.gateway.gateway import Gateway
from portico.gateway.http.server import serve
from portico.gateway.node_options import GatewayOptions
from tests.gateway.test_pipeline import HOST, plugin, snapshot
from tests.support.openai_server import Behaviour, OpenAIServer

CHAT = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


async def timings(
    client: httpx.AsyncClient, url: str, headers: dict[str, str]
) -> tuple[float, float]:
    """Seconds to the first body byte and to the last."""
    started = time.perf_counter()
    async with client.stream("POST", url, json=CHAT, headers=headers) as response:
        first = None
        async for _ in response.aiter_raw():
            if first is None:
                first = time.perf_counter() - started
        assert response.status_code == 200
    assert first is not None
    return first, time.perf_counter() - started


async def main(requests: int, delay: float) -> None:
    with OpenAIServer() as provider:
        provider.behaviour = Behaviour(words=["w"] * 8, chunk_delay=delay)
        gateway = Gateway(options=GatewayOptions(egress_allow=("127.0.0.0/8",)))
        config = {
            "provider": "openai-compatible",
            "override": {"endpoint": provider.url},
            "auth": {"header": {"Authorization": "Bearer sk"}},
        }
        await gateway.apply(snapshot(provider.port, [plugin("ai-proxy", 430, **config)]))
        server = await serve(gateway.handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        results: dict[str, list[tuple[float, float]]] = {"direct": [], "gateway": []}
        try:
            async with httpx.AsyncClient(timeout=30) as client:
                for _ in range(requests):
                    results["direct"].append(await timings(client, provider.url, {}))
                    via = f"http://127.0.0.1:{port}/v1/chat/completions"
                    results["gateway"].append(await timings(client, via, {"Host": HOST}))
        finally:
            server.close()
            await gateway.close()
    print(f"{requests} streamed completions, 8 chunks {delay * 1000:.0f} ms apart, medians:")
    for name, rows in results.items():
        first = statistics.median(r[0] for r in rows) * 1000
        last = statistics.median(r[1] for r in rows) * 1000
        print(f"  {name:<8} first byte {first:7.2f} ms   last byte {last:8.2f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--delay", type=float, default=0.05)
    args = parser.parse_args()
    asyncio.run(main(args.requests, args.delay))
