"""schemathesis against the admin API's own ``/openapi.json``, on a live server.

The control-plane app runs in uvicorn on a loopback port, in a thread with its own event loop
(the store's connections belong to the loop that opened them), against a database of its own
cloned from the migrated template, with the bootstrap administrator (``portico bootstrap``)
signed in through ``/auth/token``: a real ID token. Every operation the document describes,
the public token endpoints included, gets a bounded number of generated requests, valid and
invalid, and every answer must pass schemathesis' default checks: no server error; a
documented status code, content type and ``Allow`` header; a body that matches the declared
schema; invalid input refused; valid input accepted (but for the contract's rules the
document does not state, ``UNDESCRIBED_RULES``); nothing answered without the token.

The operations are parametrized at collection, from the document the app generates (the lazy
``schemathesis.pytest.from_fixture`` does not run under pytest 9.2: it sets
``node._nodeid``, which pytest no longer has); a test checks that the live server serves
exactly that document.

Some data exists first (a pending and an approved registration, so an event trail, a
notification and an email; a queued and a finished job), so lists return rows to validate.
Random ids name nothing (404) and ``/auth/token`` soon answers 429: both are documented.
Generated gateway connections name remote sides that do not answer (or that the SSRF guard
refuses): their checks fail, a refusal the document cannot state (``REMOTE_CHECK_FAILED``).
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from pydantic import SecretStr
from schemathesis.specs.openapi.checks import positive_data_acceptance

from portico.app import create_app
from portico.bootstrap import bootstrap
from portico.core.clock import utcnow
from portico.core.db.engine import Database
from portico.core.jobs import Job, JobStatus
from portico.core.settings import Settings
from portico.marketplace.app import PREFIX
from tests.conftest import TEST_SECRET, DatabaseTemplate
from tests.marketplace.conftest import marketplace_app
from tests.support.live_server import serving

ADMIN_EMAIL = "root@portal.example.com"
ADMIN_PASSWORD = "bootstrap-password-123"
#: seconds a request may take: this asserts what is answered, not how fast
SLOW_ANSWER = 60
#: examples per operation and generation phase: enough to reach every declared status of
#: this API's operations, few enough that the file does not dominate the run on two cores
#: (at 25 it was the longest file of the SQLite run). Under --db=postgresql the same
#: operations get fewer: what the store itself refuses (NUL in text, lengths, out-of-range
#: numbers) shows within a few, and at 25 this file alone took a third of the PostgreSQL
#: run (550 of 1,725 worker-seconds)
MAX_EXAMPLES = 10 if os.environ.get("PORTICO_TEST_STORE") == "postgresql" else 15


@dataclass(frozen=True)
class LiveServer:
    base_url: str
    id_token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.id_token}"}


@pytest.fixture(scope="module")
def live_admin_api(
    db_template: DatabaseTemplate, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """One server for the module (a server per operation would cost more than the
    requests): its own database, cloned from the migrated template like every test's."""
    tmp_path = tmp_path_factory.mktemp("schemathesis")
    database_url = db_template.new_url(tmp_path)
    try:
        yield from _serve(database_url, tmp_path)
    finally:
        db_template.drop(database_url)


def _serve(database_url: str, tmp_path: Path) -> Iterator[LiveServer]:
    config = Settings(
        environment="test",
        data_dir=tmp_path,
        database_url=database_url,
        secret_key=SecretStr(TEST_SECRET),
        log_format="text",
        log_level="WARNING",
        bootstrap_admin_email=ADMIN_EMAIL,
        bootstrap_admin_password=SecretStr(ADMIN_PASSWORD),
        idp_web_api_key=SecretStr("AIzaSy-schemathesis-web-api-key"),
        # generated connections name public addresses that do not answer: fail their checks soon
        marketplace_connector_timeout_seconds=0.5,
        _env_file=None,  # type: ignore[call-arg]
    )
    asyncio.run(_bootstrap(config))
    with serving(create_app(config), "admin-api") as base:
        live = LiveServer(base_url=base + PREFIX, id_token=_seed(base))
        BootstrapAdministrator.token = live.id_token
        try:
            yield live
        finally:
            BootstrapAdministrator.token = None


async def _bootstrap(config: Settings) -> None:
    database = Database(config.resolved_database_url)
    try:
        await bootstrap(config, database)
        async with database.session() as session, session.begin():
            now = utcnow()
            session.add(Job(id=uuid.uuid4(), kind="seed.queued", params={"n": 1}, created_at=now))
            session.add(
                Job(
                    id=uuid.uuid4(),
                    kind="seed.done",
                    status=JobStatus.SUCCEEDED,
                    params={},
                    progress_done=3,
                    progress_total=3,
                    result={"imported": 3},
                    created_at=now - timedelta(minutes=5),
                    started_at=now - timedelta(minutes=4),
                    finished_at=now - timedelta(minutes=3),
                )
            )
    finally:
        await database.dispose()


def _seed(base: str) -> str:
    """Sign in as the bootstrap administrator; register two accounts and approve one."""
    with httpx.Client(base_url=base, timeout=30) as http:
        signed_in = http.post(
            PREFIX + "/auth/token", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}
        )
        assert signed_in.status_code == 200, signed_in.text
        token: str = signed_in.json()["data"]["id_token"]
        for name in ("ada", "grace"):
            registered = http.post(
                "/api/portal/v1/registrations",
                json={
                    "email": f"{name}@example.com",
                    "password": "a-long-enough-password",
                    "display_name": name.title(),
                },
            )
            assert registered.status_code == 202, registered.text
        admin = {"Authorization": f"Bearer {token}"}
        pending = http.get(PREFIX + "/users/pending", headers=admin).json()["data"]
        approved = http.post(PREFIX + f"/users/{pending[0]['id']}/approve", headers=admin)
        assert approved.status_code == 200, approved.text
        return token


def _described() -> dict[str, Any]:
    """The document ``GET /openapi.json`` serves, built from the routes at import time (the
    tests are parametrized per operation at collection); the test checks that the live
    server serves this very document."""
    app = marketplace_app(
        create_app(
            Settings(
                environment="test",
                database_url="sqlite+aiosqlite:///:memory:",  # never connected to
                secret_key=SecretStr(TEST_SECRET),
                _env_file=None,  # type: ignore[call-arg]
            )
        )
    )
    document = app.openapi()
    document["servers"] = [{"url": PREFIX}]
    served: dict[str, Any] = json.loads(json.dumps(document))  # as JSON has it
    return served


DOCUMENT = _described()
schema = schemathesis.openapi.from_dict(DOCUMENT)


#: what the token is until the server signs in: schemathesis builds some cases (its coverage
#: phase) at collection, and the test gives them the real token before sending them
NOT_SIGNED_IN = "Bearer not-signed-in-yet"


@schema.auth(refresh_interval=None)
class BootstrapAdministrator:
    """Signs schemathesis' requests with the administrator's ID token. Through an auth
    provider rather than a header of every request, schemathesis knows the token is
    credentials: it leaves it out of the requests that test an operation without them."""

    token: ClassVar[str | None] = None  # the live server's, while it runs

    def get(self, _case: schemathesis.Case[Any], _ctx: schemathesis.AuthContext) -> str:
        return NOT_SIGNED_IN if self.token is None else f"Bearer {self.token}"

    def set(self, case: schemathesis.Case[Any], data: str, _ctx: schemathesis.AuthContext) -> None:
        case.headers = {**(case.headers or {}), "Authorization": data}


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_admin_api_conforms_to_its_openapi_document(
    case: schemathesis.Case[Any], live_admin_api: LiveServer
) -> None:
    if case.headers and case.headers.get("Authorization") == NOT_SIGNED_IN:
        case.headers["Authorization"] = f"Bearer {live_admin_api.id_token}"
    response = case.call(base_url=live_admin_api.base_url, timeout=SLOW_ANSWER)
    if response.request.headers.get("Authorization") == f"Bearer {live_admin_api.id_token}":
        # every permission: a refusal would mean the run tested nothing past authentication
        assert response.status_code not in (401, 403) or case.path.startswith("/auth/"), (
            response.text
        )
    excluded: list[schemathesis.CheckFunction] = []
    if _refused_by_an_undescribed_rule(response):
        excluded.append(positive_data_acceptance)
    # the base URL is also for the checks that send requests of their own
    case.validate_response(
        response,
        excluded_checks=excluded,
        transport_kwargs={"base_url": live_admin_api.base_url},
    )


#: rules of the contract the document does not state, so that a request it allows may still
#: be refused, rightly: no text may hold NUL (PostgreSQL cannot store it), in a query
#: parameter or in a body; a time range must not end before it starts (OpenAPI cannot relate
#: two parameters); ids in a body must name what exists
UNDESCRIBED_RULES = (
    "must not contain NUL",
    "must not contain NUL characters",
    "must not be before filter[from]",
    # a body's organisation and team ids must name existing ones (publishing): whether an id
    # exists is no property of the request a schema could state
    "names no portal organisation",
    "names no team of the listed organisations",
)


#: a connection's check calls the remote side its configuration names: whether it answers is
#: no property of the request a schema could state (generated URLs name nothing that answers)
REMOTE_CHECK_FAILED = "/problems/connection-check-failed"


#: a body may name an organisation, a connection or an API node: whether one exists is the
#: store's business, not the schema's (generated ids name nothing)
UNKNOWN_REFERENCE = "/problems/unknown-reference"
#: an API's documentation may be sent as text (JSON or YAML): a schema can say it is a
#: string, not that it reads as an OpenAPI document
DOCUMENT_TEXT = ("/documentation", "not an OpenAPI 3.0/3.1 document in JSON or YAML")


def _refused_by_an_undescribed_rule(response: schemathesis.Response) -> bool:
    if response.status_code != 400:
        return False
    if response.json().get("type") in (REMOTE_CHECK_FAILED, UNKNOWN_REFERENCE):
        return True
    errors = response.json().get("errors") or []
    return bool(errors) and all(
        e["detail"].endswith(UNDESCRIBED_RULES)
        or (e.get("pointer"), e["detail"].startswith(DOCUMENT_TEXT[1])) == (DOCUMENT_TEXT[0], True)
        for e in errors
    )


def test_the_live_server_serves_the_document_tested(live_admin_api: LiveServer) -> None:
    # the first request builds the document: a generous timeout (this asserts content)
    served = httpx.get(
        live_admin_api.base_url + "/openapi.json", headers=live_admin_api.headers, timeout=60
    )
    assert served.status_code == 200, served.text
    assert served.json() == DOCUMENT
