"""ldap-auth against a real slapd, policy-agent against a real Rego engine (rego-cpp behind
OPA's data API): the servers of ``tests/support``, started the way the tests start them.

ldap-auth is measured on its warm path (the bind remembered, as for a client that sends the
same credentials again within a minute): the warm-up run binds once.

policy-agent has no warm path: every request waits for a decision, one HTTP exchange with the
engine. Two cases tell the plugin's cost from the engine's:

* ``policy-agent``: the real engine, a Python process evaluating Rego with rego-cpp, which
  answers ~1,200 decisions/s on a 2-core machine; the gateway cannot go faster than its
  engine, so the goal (0.2) is the engine's, not the plugin's. A production OPA (Go) answers
  tens of thousands a second.
* ``policy-agent-static``: every decision is nginx answering ``{"result": {"allow": true}}``:
  what is left is the plugin (input built, JSON both ways, the exchange on a kept-alive
  connection), goal 0.5.
"""

from __future__ import annotations

import base64
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

from bench_gateway import serving_nginx
from bench_plugins import Case, Setup, free_port
from portico_node import LDAP_DN

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: tests.support

from tests.support.ldapserver import USERS_DN, LdapServer, User
from tests.support.opaserver import OpaServer

BENCH_USER = User("bench", "bench-" + "password")  # the directory's throwaway user
POLICY = """
package bench.authz
import rego.v1

default allow := false

allow if {
    input.request.method == "GET"
    not startswith(input.request.path, "/admin")
}
"""
#: the static decision's answer
DECISION_ANSWER = """default_type application/json; return 200 '{"result":{"allow":true}}';"""


def _policy_agent(host: str) -> Setup:
    config = {"host": host, "policy": "bench/authz"}
    plugin = {"name": "policy-agent", "scope": "route", "order": 160, "config": config}
    return Setup(attach=[plugin])


@contextlib.contextmanager
def _directory(work: Path) -> Iterator[Setup]:
    assert BENCH_USER.dn == LDAP_DN  # the DN the bench consumer's credential holds
    with LdapServer(work / "slapd", (BENCH_USER,)) as server:
        config = {"ldap_uri": server.uri, "base_dn": USERS_DN}
        plugin = {"name": "ldap-auth", "scope": "route", "order": 104, "config": config}
        token = base64.b64encode(f"{BENCH_USER.cn}:{BENCH_USER.password}".encode()).decode()
        yield Setup(attach=[plugin], headers={"Authorization": f"Basic {token}"})


@contextlib.contextmanager
def _engine(work: Path) -> Iterator[Setup]:
    policy = work / "bench.rego"
    policy.write_text(POLICY)
    with OpaServer(free_port(), [policy], work / "opa.log") as server:
        yield _policy_agent(server.url)


@contextlib.contextmanager
def _static_decision(work: Path) -> Iterator[Setup]:
    with serving_nginx(work, "decision", DECISION_ANSWER) as port:
        yield _policy_agent(f"http://127.0.0.1:{port}")


CASES = [
    Case("ldap-auth", 0.8, _directory),
    Case("policy-agent", 0.2, _engine),
    Case("policy-agent-static", 0.5, _static_decision),
]
