"""A small OpenAI-compatible chat completions server for the AI plugins' tests.

No LLM provider can run here, so this speaks the wire protocol of OpenAI's
``POST /v1/chat/completions`` over real HTTP/1.1 (``http.server`` in a thread): a JSON answer
with a ``usage`` report, or, for ``"stream": true``, Server-Sent Events sent chunk by chunk
(chunked transfer encoding, each chunk flushed on its own), ending with a usage chunk when the
request asked for ``stream_options.include_usage``, then ``data: [DONE]``. Every request is
recorded (path, headers, JSON body) so that tests can see what the provider got, and every
connection accepted is counted (``connections``): a client that reuses its connections opens
fewer than it sends requests.

A test can hold the last chunk of a stream back (``hold_last``) until it has seen the earlier
ones arrive through the gateway: streaming is then observed without measuring time.

By hand (see by_hand.py), it serves until stopped (any model, any key):

    .venv/bin/python tests/support/openai_server.py --port 8000 [--chunk-delay 0.2]
"""

from __future__ import annotations

if __name__ == "__main__" and not __package__:  # run by its path: see by_hand.py
    from by_hand import run_as_module

    run_as_module(__file__)

import argparse
import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import by_hand


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class Behaviour:
    """What the server answers (tests change it between requests)."""

    words: list[str] = field(default_factory=lambda: ["Hello", " from", " the", " model"])
    prompt_tokens: int = 7
    completion_tokens: int = 4
    #: seconds between two streamed chunks
    chunk_delay: float = 0.0
    #: when set, the last content chunk waits for it
    hold_last: threading.Event | None = None
    #: seconds to wait before answering at all (a slow provider)
    answer_delay: float = 0.0


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that went away mid-answer (a gateway that timed out) is not an error here
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class OpenAIServer:
    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.received: list[Received] = []
        self.behaviour = Behaviour()
        self.connections = 0  # accepted so far
        self._counting = threading.Lock()  # (each connection is handled in its own thread)
        self._server = _Server((host, port), _handler(self))
        self.host = host
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,))
        self._thread.daemon = True

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1/chat/completions"

    def __enter__(self) -> OpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self.behaviour.hold_last is not None:
            self.behaviour.hold_last.set()
        self._server.shutdown()
        self._server.server_close()


def _handler(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            with server._counting:
                server.connections += 1

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except ValueError:
                self._json(400, {"error": {"message": "invalid JSON"}})
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            server.received.append(Received(self.path, headers, body))
            if not self.path.endswith("/chat/completions"):
                self._json(404, {"error": {"message": "not found"}})
                return
            behaviour = server.behaviour
            if behaviour.answer_delay:
                time.sleep(behaviour.answer_delay)
            if body.get("stream") is True:
                self._stream(body, behaviour)
            else:
                self._json(200, _completion(body, behaviour))

        def _json(self, status: int, document: dict[str, Any]) -> None:
            data = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, body: dict[str, Any], behaviour: Behaviour) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            model = body.get("model", "")
            words = behaviour.words
            for index, word in enumerate(words):
                if index == len(words) - 1 and behaviour.hold_last is not None:
                    behaviour.hold_last.wait(10)
                elif index and behaviour.chunk_delay:
                    time.sleep(behaviour.chunk_delay)
                delta = {"content": word} if index else {"role": "assistant", "content": word}
                self._event(_chunk(model, [{"index": 0, "delta": delta, "finish_reason": None}]))
            self._event(_chunk(model, [{"index": 0, "delta": {}, "finish_reason": "stop"}]))
            options = body.get("stream_options")
            if isinstance(options, dict) and options.get("include_usage"):
                self._event({**_chunk(model, []), "usage": _usage(behaviour)})
            self._send_chunk(b"data: [DONE]\n\n")
            self._send_chunk(b"")

        def _event(self, document: dict[str, Any]) -> None:
            self._send_chunk(b"data: " + json.dumps(document).encode() + b"\n\n")

        def _send_chunk(self, data: bytes) -> None:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


def _usage(behaviour: Behaviour) -> dict[str, int]:
    return {
        "prompt_tokens": behaviour.prompt_tokens,
        "completion_tokens": behaviour.completion_tokens,
        "total_tokens": behaviour.prompt_tokens + behaviour.completion_tokens,
    }


def _chunk(model: str, choices: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": choices,
    }


def _completion(body: dict[str, Any], behaviour: Behaviour) -> dict[str, Any]:
    messages = body.get("messages") or []
    last = messages[-1].get("content", "") if messages and isinstance(messages[-1], dict) else ""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": body.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": f"you said: {last}"},
                "finish_reason": "stop",
            }
        ],
        "usage": _usage(behaviour),
    }


@contextmanager
def _by_hand(arguments: argparse.Namespace) -> Iterator[str]:
    with OpenAIServer(arguments.host, arguments.port) as server:
        server.behaviour.chunk_delay = arguments.chunk_delay
        yield (
            f"OpenAI-compatible server {by_hand.LISTENING} {server.url} (any model, any key;"
            ' "stream": true answers with Server-Sent Events)'
        )


if __name__ == "__main__":
    parser = by_hand.command_line(__doc__.split("\n\n")[0], port=8000)
    parser.add_argument(
        "--chunk-delay",
        type=float,
        default=0.0,
        help="seconds between two streamed chunks (default: %(default)s)",
    )
    by_hand.serve(parser, _by_hand)
