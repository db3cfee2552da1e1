"""The AI plugins: ai-proxy forwarding chat completions to a provider, ai-prompt-guard
checking them, ai-prompt-template filling a named template, ai-rate-limiting counting the
tokens each answer reports, each against the same routes proxied without the plugin to the
same provider (with the same request).

The provider is nginx answering every request with a fixed OpenAI chat completion (with its
usage report): a Python stand-in would be the bottleneck and hide the gateway's cost. Both
gateways' routes have it as their upstream; with ai-proxy the plugin sends the request there
itself (its override endpoint), after reading the body and setting the model.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

from bench_gateway import serving_nginx
from bench_plugins import Case, Setup

COMPLETION = json.dumps(
    {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "gpt-bench",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hello from the model."},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
    }
)
#: the provider's answer (COMPLETION holds no single quote)
PROVIDER_ANSWER = f"default_type application/json; return 200 '{COMPLETION}';"
CHAT = json.dumps(
    {
        "model": "client-model",
        "messages": [
            {"role": "system", "content": "You are a weather assistant."},
            {"role": "user", "content": "What is the weather forecast for Lisbon tomorrow?"},
        ],
    }
)


def _provider(work: Path) -> contextlib.AbstractContextManager[int]:
    """The provider on a free port, which it yields once it listens."""
    return serving_nginx(work, "provider", PROVIDER_ANSWER)


def _chat_setup(port: int, attach: list[dict[str, object]]) -> Setup:
    return Setup(
        attach=attach,
        headers={"Content-Type": "application/json", "Authorization": "Bearer client-own"},
        method="POST",
        body=CHAT,
        upstream_port=port,
    )


@contextlib.contextmanager
def _ai_proxy(work: Path) -> Iterator[Setup]:
    with _provider(work) as port:
        config = {
            "provider": "openai-compatible",
            "override": {"endpoint": f"http://127.0.0.1:{port}/v1/chat/completions"},
            "auth": {"header": {"Authorization": "Bearer sk-bench"}},
            "model": {"source": "config", "name": "gpt-bench"},
        }
        plugin = {"name": "ai-proxy", "scope": "route", "order": 430, "config": config}
        yield _chat_setup(port, [plugin])


@contextlib.contextmanager
def _ai_prompt_guard(work: Path) -> Iterator[Setup]:
    with _provider(work) as port:
        config = {
            "deny_patterns": [
                "(?i)ignore (all )?previous instructions",
                "(?i)system prompt",
                r"\b\d{16}\b",
            ],
            "allow_patterns": ["(?i)weather", "(?i)forecast"],
        }
        plugin = {"name": "ai-prompt-guard", "scope": "route", "order": 400, "config": config}
        yield _chat_setup(port, [plugin])


#: a template a request names, with its variables
TEMPLATE_REQUEST = json.dumps({"template_name": "forecast", "city": "Lisbon", "day": "tomorrow"})


@contextlib.contextmanager
def _ai_prompt_template(work: Path) -> Iterator[Setup]:
    with _provider(work) as port:
        template = {
            "model": "gpt-bench",
            "messages": [
                {"role": "system", "content": "You are a weather assistant."},
                {"role": "user", "content": "What is the forecast for {{city}} {{day}}?"},
            ],
        }
        config = {"templates": [{"name": "forecast", "template": template}]}
        plugin = {"name": "ai-prompt-template", "scope": "route", "order": 410, "config": config}
        setup = _chat_setup(port, [plugin])
        setup.body = TEMPLATE_REQUEST
        yield setup


@contextlib.contextmanager
def _ai_rate_limiting(work: Path) -> Iterator[Setup]:
    with _provider(work) as port:
        # a budget the run never spends: every answer's usage is read and counted
        config = {"limit": 1_000_000_000_000, "time_window": 3600}
        plugin = {"name": "ai-rate-limiting", "scope": "route", "order": 220, "config": config}
        yield _chat_setup(port, [plugin])


CASES = [
    Case("ai-proxy", 0.8, _ai_proxy),
    Case("ai-prompt-guard", 0.8, _ai_prompt_guard),
    Case("ai-prompt-template", 0.8, _ai_prompt_template),
    Case("ai-rate-limiting", 0.8, _ai_rate_limiting),
]
