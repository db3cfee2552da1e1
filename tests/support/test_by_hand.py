"""The test servers started by hand, as the README shows: ``.venv/bin/python
tests/support/<name>.py --port N [options]``, each run as a user would (a process of its own,
by its path), waited for until it says where it listens, asked once in its own protocol, then
stopped with SIGTERM, after which it must have exited with status 0 and closed its ports."""

from __future__ import annotations

import json
import re
import socket
import sys
from pathlib import Path
from typing import ClassVar

import httpx
import jwt
import ldap3
import pytest
from aiokafka import AIOKafkaProducer
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from .by_hand import LISTENING
from .process import ServerProcess
from .waiting import eventually_sync

SUPPORT = Path(__file__).resolve().parent


class ByHand(ServerProcess):
    """``tests/support/<script> --port <a free port> <options>``, ready once it has said
    where it listens."""

    name = "a test server run by hand"

    def __init__(self, script: str, options: list[str], base_dir: Path) -> None:
        self.script, self.options = script, options
        super().__init__(base_dir / f"{script}.log")

    def command(self) -> list[str]:
        return [sys.executable, str(SUPPORT / self.script), *self._listening(), *self.options]

    def _listening(self) -> list[str]:
        return ["--port", str(self.port)]

    def is_ready(self) -> bool:
        return LISTENING in self.output()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def says(self, line: str) -> bool:
        """Whether the server printed ``line`` (one of its own lines, whole)."""
        return line in self.output().splitlines()


class SlapdByHand(ByHand):
    listeners: ClassVar[int] = 2
    bind_failure = None  # slapd says nothing when a port is taken

    def _listening(self) -> list[str]:
        return ["--port", str(self.port), "--tls-port", str(self.ports[1] if self.ports else 0)]


def _closed(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return False
    except OSError:
        return True


def _stop(server: ByHand) -> None:
    ports = server.ports or ()
    server.stop()
    assert server.returncode == 0, server.output()
    assert all(_closed(port) for port in ports)


def test_the_openid_provider_serves_discovery_and_a_token(tmp_path: Path) -> None:
    server = ByHand("oidcprovider.py", ["--client-id", "shop", "--client-secret", "s3"], tmp_path)
    with server:
        discovery = httpx.get(f"{server.url}/.well-known/openid-configuration").json()
        assert discovery["issuer"] == server.url
        assert f"{server.url}/.well-known/openid-configuration" in server.output()

        answer = httpx.post(
            discovery["token_endpoint"],
            auth=("shop", "s3"),
            data={"grant_type": "client_credentials"},
        )
        assert answer.status_code == 200, answer.text
        token = answer.json()["access_token"]
        key = jwt.PyJWKClient(discovery["jwks_uri"]).get_signing_key_from_jwt(token)
        claims = jwt.decode(token, key, algorithms=["RS256"], audience="shop")
        assert (claims["iss"], claims["sub"]) == (server.url, "shop")
        wrong = httpx.post(
            discovery["token_endpoint"],
            auth=("shop", "not-s3"),
            data={"grant_type": "client_credentials"},
        )
        assert wrong.status_code == 401
    _stop(server)


def test_slapd_binds_its_users_and_leaves_nothing_behind(tmp_path: Path) -> None:
    options = ["--user", "alice:alice-pw", "--admin-password", "admin-pw"]
    server = SlapdByHand("ldapserver.py", options, tmp_path)
    with server:
        found = re.search(r"certificate (\S+)/cert\.pem\)", server.output())
        assert found is not None, server.output()
        files = Path(found.group(1))
        assert files.is_dir()
        directory = ldap3.Server(f"ldap://127.0.0.1:{server.port}")
        alice = "cn=alice,ou=users,dc=example,dc=org"
        with ldap3.Connection(directory, alice, "alice-pw") as connection:
            assert connection.extend.standard.who_am_i() == f"dn:{alice}"
        assert not ldap3.Connection(directory, alice, "wrong").bind()
        admin = ldap3.Connection(directory, "cn=admin,dc=example,dc=org", "admin-pw")
        assert admin.bind()
        admin.unbind()
    _stop(server)
    assert not files.exists()  # slapd's database, configuration and certificate


def test_the_policy_engine_decides_by_its_policy(tmp_path: Path) -> None:
    policy = tmp_path / "authz.rego"
    policy.write_text(
        'package portico.authz\n\ndefault allow := false\n\nallow if input.method == "GET"\n'
    )
    with ByHand("opaserver.py", ["--policy", str(policy)], tmp_path) as server:
        for method, allowed in (("GET", True), ("POST", False)):
            answer = httpx.post(
                f"{server.url}/v1/data/portico/authz", json={"input": {"method": method}}
            )
            assert answer.json() == {"result": {"allow": allowed}}
    _stop(server)


def test_the_openai_server_streams_a_completion(tmp_path: Path) -> None:
    with ByHand("openai_server.py", [], tmp_path) as server:
        request = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        with httpx.stream("POST", f"{server.url}/v1/chat/completions", json=request) as answer:
            assert answer.headers["content-type"] == "text/event-stream"
            events = [line for line in answer.iter_lines() if line.startswith("data: ")]
        assert events[-1] == "data: [DONE]"
        chunks = [json.loads(event.removeprefix("data: ")) for event in events[:-1]]
        words = [c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"]]
        assert "".join(words) == "Hello from the model"
    _stop(server)


def test_the_otlp_receiver_takes_spans_and_prints_them(tmp_path: Path) -> None:
    export = ExportTraceServiceRequest()
    resource = export.resource_spans.add()
    service = resource.resource.attributes.add()
    service.key, service.value.string_value = "service.name", "shop"
    span = resource.scope_spans.add().spans.add()
    span.name, span.trace_id, span.span_id = "GET /orders", bytes(range(16)), bytes(range(8))
    with ByHand("otlpreceiver.py", [], tmp_path) as server:
        answer = httpx.post(
            f"{server.url}/v1/traces",
            content=export.SerializeToString(),
            headers={"content-type": "application/x-protobuf"},
        )
        assert answer.status_code == 200
        line = (
            "span 'GET /orders' of 'shop': trace 000102030405060708090a0b0c0d0e0f,"
            " span 0001020304050607, parent -, {}"
        )
        eventually_sync(lambda: server.says(line), what=server.output)
    _stop(server)


async def test_the_kafka_broker_takes_a_record_from_aiokafka(tmp_path: Path) -> None:
    with ByHand("kafkabroker.py", [], tmp_path) as server:
        producer = AIOKafkaProducer(bootstrap_servers=f"127.0.0.1:{server.port}", acks="all")
        await producer.start()
        try:
            sent = await producer.send_and_wait("portico-access", b'{"status": 200}', key=b"k")
        finally:
            await producer.stop()
        assert (sent.topic, sent.partition, sent.offset) == ("portico-access", 0, 0)
        line = """portico-access[0]@0 key b'k': b'{"status": 200}'"""
        eventually_sync(lambda: server.says(line), what=server.output)
    _stop(server)


_ROW = {"route": "/orders", "status": 200}
#: kind → (options, the request's path, headers and body, the line the sink prints)
_SINKS = {
    "clickhouse": (
        ["--user", "logger", "--password", "ch-pw"],
        "/?query=INSERT+INTO+logs.access+FORMAT+JSONEachRow",
        {"x-clickhouse-user": "logger", "x-clickhouse-key": "ch-pw"},
        json.dumps(_ROW) + "\n",
        f"logs.access: {json.dumps(_ROW)}",
    ),
    "loki": (
        [],
        "/loki/api/v1/push",
        {"x-scope-orgid": "team-a", "content-type": "application/json"},
        json.dumps({"streams": [{"stream": {"job": "gw"}, "values": [["1000", "GET /orders"]]}]}),
        'team-a {"job": "gw"} 1000: GET /orders',
    ),
    "search": (
        [],
        "/_bulk",
        {"content-type": "application/x-ndjson"},
        json.dumps({"create": {"_index": "logs"}}) + "\n" + json.dumps(_ROW) + "\n",
        f"logs: {json.dumps(_ROW)}",
    ),
}


@pytest.mark.parametrize("kind", sorted(_SINKS))
def test_a_log_sink_takes_an_entry_and_prints_it(tmp_path: Path, kind: str) -> None:
    options, path, headers, body, line = _SINKS[kind]
    with ByHand("logsinks.py", ["--kind", kind, *options], tmp_path) as server:
        answer = httpx.post(server.url + path, content=body, headers=headers)
        assert answer.is_success, answer.text
        eventually_sync(lambda: server.says(line), what=server.output)
    _stop(server)


def test_a_taken_port_is_said_plainly(tmp_path: Path) -> None:
    with ByHand("kafkabroker.py", [], tmp_path) as first:
        second = ByHand("kafkabroker.py", [], tmp_path / "second")
        second.ports = first.ports  # the port is given: start() does not look for another
        with pytest.raises(RuntimeError, match="exited") as refused:
            second.start()
        assert "kafkabroker.py: cannot serve: [Errno 98] Address already in use" in str(
            refused.value
        )
    _stop(first)
