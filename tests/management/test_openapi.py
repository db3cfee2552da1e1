"""The management service's ``/api/openapi.json`` tells the truth: schemathesis against it,
on a live server, and the failures every operation documents.

The control-plane app runs in uvicorn on a loopback port, in a thread with its own event loop
(the store's connections belong to the loop that opened them), against a database of its own
cloned from the migrated template, with the bootstrap administrator signed in through
``POST /api/auth/login``: a real access token. Every operation the document describes (the
data-plane, auth and problem pages included; the portal API has its own document,
``tests/portal/test_openapi.py``) gets a bounded number of generated
requests, valid and invalid, and every answer must pass schemathesis' default checks: no
server error; a documented status code, content type and ``Allow`` header; a body that
matches the declared schema; invalid input refused; valid input accepted (but for the
checks of a body's values the document cannot state, ``BODY_RULES``, and the contract's
rules it does not state, ``UNDESCRIBED_RULES``); nothing answered without the token.

The operations are parametrized at collection, from the document the app generates (as in
``tests/marketplace/test_schemathesis.py``); a test checks that the live server serves
exactly that document.

Some data exists first (an environment with an upstream and a data-plane token, an API with
a revision, a consumer, a role, a group, a second member), so that lists return rows and
path ids name something: a generated path id is replaced by a real one (of the same
parameter name) for two cases in three, the rest name nothing (404, documented).
"""

from __future__ import annotations

import asyncio
import json
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar

import httpx
import pytest
import schemathesis
from fastapi import APIRouter, Depends, params
from fastapi.dependencies.utils import get_flat_params
from fastapi.routing import APIRoute, iter_route_contexts
from hypothesis import HealthCheck, settings
from pydantic import SecretStr
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import positive_data_acceptance

from portico.app import create_app
from portico.bootstrap import bootstrap
from portico.core.db.engine import Database
from portico.core.errors import Conflict
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.core.schema import WriteSchema
from portico.core.settings import Settings
from portico.management.access import OrgCaller, authenticate, require
from portico.management.dataplane.endpoints import node_bearer
from tests.conftest import TEST_SECRET, DatabaseTemplate
from tests.support.live_server import serving

ADMIN_EMAIL = "root@example.com"
ADMIN_PASSWORD = "bootstrap-password-123"
#: seconds a request may take: this asserts what is answered, not how fast (argon2 hashing on
#: two cores shared with the rest of the suite can take more than the default 10 s)
SLOW_ANSWER = 60
#: examples per operation and generation phase (with the coverage phase, some 3,000 requests
#: in all): enough to reach the declared statuses of most operations, few enough that the
#: file runs in under three minutes on two busy cores. Under --db=postgresql fewer: the
#: coverage phase still sends every boundary value, and what the store itself refuses (NUL
#: in text, lengths, out-of-range numbers) shows within a few (the marketplace's run does
#: the same)
MAX_EXAMPLES = 4 if os.environ.get("PORTICO_TEST_STORE") == "postgresql" else 8
#: the data-plane config long-polls up to ``wait`` seconds: the run does not wait (a 304 at once)
MAX_WAIT = 0


@dataclass
class LiveServer:
    base_url: str
    token: str
    #: real ids by path parameter name
    ids: dict[str, str] = field(default_factory=dict)

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def _settings(**overrides: Any) -> Settings:
    return Settings(
        environment="test",
        secret_key=SecretStr(TEST_SECRET),
        log_format="text",
        log_level="WARNING",
        bootstrap_admin_email=ADMIN_EMAIL,
        bootstrap_admin_password=SecretStr(ADMIN_PASSWORD),
        _env_file=None,  # type: ignore[call-arg]
        **overrides,
    )


@pytest.fixture(scope="module")
def live_management_api(
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
    config = _settings(data_dir=tmp_path, database_url=database_url)
    asyncio.run(_bootstrap(config))
    with serving(create_app(config), "management-api") as base:
        live = _seed(base)
        Administrator.token = live.token
        try:
            yield live
        finally:
            Administrator.token = None


async def _bootstrap(config: Settings) -> None:
    database = Database(config.resolved_database_url)
    try:
        await bootstrap(config, database)
    finally:
        await database.dispose()


def _seed(base: str) -> LiveServer:
    """Sign in as the bootstrap administrator and create something of each kind."""
    with httpx.Client(base_url=base, timeout=30) as http:
        signed_in = http.post(
            "/api/auth/login", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}
        )
        assert signed_in.status_code == 200, signed_in.text
        live = LiveServer(base_url=base, token=signed_in.json()["token"])
        http.headers.update(live.headers)

        def made(method: str, path: str, body: Any) -> dict[str, Any]:
            response = http.request(method, path, json=body)
            assert response.status_code in (200, 201), response.text
            created: dict[str, Any] = response.json()
            return created

        org = http.get("/api/orgs").json()["items"][0]["id"]
        base_path = f"/api/orgs/{org}"
        env = http.get(base_path + "/envs").json()["items"][0]["id"]
        upstream = made(
            "POST",
            f"{base_path}/envs/{env}/upstreams",
            {"name": "backend", "specification": {"nodes": [{"host": "127.0.0.1", "port": 9}]}},
        )["id"]
        api = made("POST", base_path + "/apis", {"name": "orders"})["id"]
        revision = made(
            "POST",
            f"{base_path}/apis/{api}/revisions",
            {
                "serviceSpec": {"name": "svc"},
                "routeSpec": [{"name": "r", "uri": "/r", "methods": ["GET"], "plugins": {}}],
                "environmentUpstreams": [{"environmentId": env, "upstreamId": upstream}],
            },
        )["id"]
        role = made("POST", base_path + "/roles", {"name": "readers", "permissions": ["api.read"]})
        live.ids.update(
            orgId=org,
            envId=env,
            upstreamId=upstream,
            apiId=api,
            revisionId=revision,
            consumerId=made("POST", base_path + "/consumers", {"username": "alice"})["id"],
            roleId=role["id"],
            groupId=made("POST", base_path + "/groups", {"name": "team"})["id"],
            # not the administrator: a generated PATCH could otherwise disable them
            userId=made("POST", base_path + "/users", {"email": "ada@example.com"})["id"],
            tokenId=made("POST", f"{base_path}/envs/{env}/dataplane-tokens", {"name": "n1"})["id"],
            pluginName="key-auth",
            kind="not-found",
        )
        return live


def _described() -> dict[str, Any]:
    """The document ``GET /api/openapi.json`` serves, built from the routes at import time
    (the tests are parametrized per operation at collection)."""
    app = create_app(_settings(database_url="sqlite+aiosqlite:///:memory:"))  # never connected
    served: dict[str, Any] = json.loads(json.dumps(app.openapi()))  # as JSON has it
    return served


DOCUMENT = _described()
#: the coverage phase enumerates the boundaries of every field of a body, which for an
#: upstream (its health checks, TLS, timeouts...) is some 700 requests per operation, three
#: times: there, the fuzzing phase's bounded examples do
CONFIG = SchemathesisConfig.from_dict(
    {
        "operations": [
            {
                "include-name-regex": "^(POST|PUT|PATCH) .*/upstreams",
                "phases": {"coverage": {"enabled": False}},
            }
        ]
    }
)
schema = schemathesis.openapi.from_dict(DOCUMENT, config=CONFIG)

#: what the token is until the server signs in: schemathesis builds some cases (its coverage
#: phase) at collection, and the test gives them the real token before sending them
NOT_SIGNED_IN = "Bearer not-signed-in-yet"


@schema.auth(refresh_interval=None)
class Administrator:
    """Signs schemathesis' requests with the administrator's access token. Through an auth
    provider, schemathesis knows the token is credentials: it leaves it out of the requests
    that test an operation without them."""

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
def test_management_api_conforms_to_its_openapi_document(
    case: schemathesis.Case[Any], live_management_api: LiveServer
) -> None:
    live = live_management_api
    if case.headers and case.headers.get("Authorization") == NOT_SIGNED_IN:
        case.headers["Authorization"] = f"Bearer {live.token}"
    _name_real_things(case, live)
    if case.query and isinstance(case.query.get("wait"), int) and case.query["wait"] > MAX_WAIT:
        case.query["wait"] = MAX_WAIT
    response = case.call(base_url=live.base_url, timeout=SLOW_ANSWER)
    if response.request.headers.get("Authorization") == f"Bearer {live.token}":
        # every permission: a refusal would mean the run tested nothing past authentication
        assert response.status_code not in (401, 403) or case.path.startswith("/api/auth/"), (
            response.text
        )
    excluded: list[schemathesis.CheckFunction] = []
    if _refused_by_an_undescribed_rule(response):
        excluded.append(positive_data_acceptance)
    # the base URL is also for the checks that send requests of their own
    case.validate_response(
        response, excluded_checks=excluded, transport_kwargs={"base_url": live.base_url}
    )


def _name_real_things(case: schemathesis.Case[Any], live: LiveServer) -> None:
    """The organisation is always the seeded one (another is a 404 before anything else);
    any other id is a seeded one for two cases in three (deterministically)."""
    for name, value in list((case.path_parameters or {}).items()):
        real = live.ids.get(name)
        if real is None:
            continue
        if name == "orgId" or zlib.crc32(str(value).encode()) % 3:
            case.path_parameters[name] = real


#: rules of the contract the document does not state, so that a request it allows may still
#: be refused, rightly: no text may hold NUL (PostgreSQL cannot store it)
UNDESCRIBED_RULES = ("must not contain NUL", "must not contain NUL characters")
#: what the management service checks in a body beyond its schema: hostnames, https URLs,
#: email addresses, known permissions, ids unique in a list and of this organisation, a
#: plugin's own configuration, integers not written as floats (strict schemas)... Such a
#: refusal names the body field at fault (``pointer``), or the plugin.
BODY_RULES = "/problems/plugin-configuration"


def _refused_by_an_undescribed_rule(response: schemathesis.Response) -> bool:
    if response.status_code != 400:
        return False
    problem = response.json()
    if problem.get("type") == BODY_RULES:
        return True
    errors = problem.get("errors") or []
    return bool(errors) and all(
        "pointer" in e or e["detail"].endswith(UNDESCRIBED_RULES) for e in errors
    )


def test_the_live_server_serves_the_document_tested(live_management_api: LiveServer) -> None:
    # the first request builds the document (seconds on a busy 2-core machine): a generous
    # timeout, since this asserts what is served, not how fast
    served = httpx.get(live_management_api.base_url + "/api/openapi.json", timeout=60)
    assert served.status_code == 200, served.text
    assert served.json() == DOCUMENT


# -- what every operation documents, derived from the route -------------------------------

PUBLIC = {
    ("POST", "/api/auth/login"),
    ("POST", "/api/auth/refresh"),
    ("POST", "/api/auth/accept-invitation"),
    ("GET", "/problems"),
    ("GET", "/problems/{kind}"),
    # SAML sign-in (tests/management/test_saml_sign_in.py)
    ("GET", "/api/auth/identity-providers"),
    ("POST", "/api/auth/saml/token"),
    ("GET", "/api/orgs/{orgId}/identity-providers/{idpId}/saml/metadata"),
    ("GET", "/api/orgs/{orgId}/identity-providers/{idpId}/saml/login"),
    ("POST", "/api/orgs/{orgId}/identity-providers/{idpId}/saml/acs"),
}


def _operations() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, operations in DOCUMENT["paths"].items():
        for method, operation in operations.items():
            yield method.upper(), path, operation


def test_no_operation_documents_a_422() -> None:
    assert [(m, p) for m, p, op in _operations() if "422" in op["responses"]] == []
    assert "HTTPValidationError" not in DOCUMENT["components"]["schemas"]


def test_every_failure_is_a_problem() -> None:
    for method, path, operation in _operations():
        for status, response in operation["responses"].items():
            if status[0] in "45":
                assert list(response["content"]) == ["application/problem+json"], (method, path)
                schema_ = response["content"]["application/problem+json"]["schema"]
                assert schema_ == {"$ref": "#/components/schemas/Problem"}, (method, path)
    problem = DOCUMENT["components"]["schemas"]["Problem"]
    assert problem["required"] == ["type", "title", "status", "detail"]
    assert "errors" in problem["properties"]


def test_authenticated_operations_document_401_and_the_bearer_scheme() -> None:
    authenticated = {(m, p) for m, p, op in _operations() if op.get("security") == [{"bearer": []}]}
    assert authenticated == {(m, p) for m, p, _ in _operations()} - PUBLIC
    for method, path, operation in _operations():
        if (method, path) in authenticated:
            assert "401" in operation["responses"], (method, path)
    assert DOCUMENT["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


def test_statuses_follow_from_each_route() -> None:
    """401 where the route authenticates, 403 where it requires a permission, 404 where it
    has path parameters, 400 where it has a body or query parameters, 413/415 with a body:
    read from the routes themselves, so a router added later is held to it too."""
    app = create_app(_settings(database_url="sqlite+aiosqlite:///:memory:"))
    seen = 0
    for route in iter_route_contexts(app.routes):
        if not isinstance(route.original_route, APIRoute) or not route.include_in_schema:
            continue
        calls = _calls(route.dependant)
        requires = any(getattr(c, "__name__", "").startswith("require_") for c in calls)
        authenticates = authenticate in calls or node_bearer in calls
        has_body = route.body_field is not None or "requestBody" in (route.openapi_extra or {})
        has_query = any(
            isinstance(f.field_info, params.Query) for f in get_flat_params(route.dependant)
        ) or any(type(c).__name__ == "ListQueryDependency" for c in calls)
        for method in route.methods or ():
            seen += 1
            statuses = set(DOCUMENT["paths"][route.path_format][method.lower()]["responses"])
            where = (method, route.path_format)
            assert ("401" in statuses) == (authenticates or where in _OWN_401), where
            assert ("403" in statuses) == (requires or where in _OWN_403), where
            # the data plane's environment may be named in the body, and not exist
            assert ("404" in statuses) == ("{" in route.path_format or node_bearer in calls)
            assert ("400" in statuses) == (has_body or has_query or where in _STRICT_QUERY), where
            assert ({"413", "415"} <= statuses) == has_body, where
            assert "500" not in statuses, where
    assert seen == len(list(_operations()))


#: the routes that answer these statuses from their own code, and declare them
_OWN_401 = {("POST", "/api/auth/login"), ("POST", "/api/auth/refresh")} | {
    ("POST", "/api/auth/accept-invitation"),
    ("POST", "/api/auth/saml/token"),
}
_OWN_403 = {("POST", "/api/orgs")} | {
    # a refused or not provisioned SAML sign-in
    ("POST", "/api/orgs/{orgId}/identity-providers/{idpId}/saml/acs"),
    ("GET", "/api/dataplane/v1/envs/{envId}/config"),
    ("POST", "/api/dataplane/v1/heartbeat"),
    ("POST", "/api/dataplane/v1/telemetry"),
}
#: the problem pages refuse query parameters they do not read (core/query.py)
_STRICT_QUERY = {("GET", "/problems"), ("GET", "/problems/{kind}")}


def test_special_statuses_are_declared_where_the_code_answers_them() -> None:
    def statuses(method: str, path: str) -> set[str]:
        return set(DOCUMENT["paths"][path][method.lower()]["responses"])

    assert "304" in statuses("GET", "/api/dataplane/v1/envs/{envId}/config")
    assert "409" in statuses("POST", "/api/orgs/{orgId}/envs")
    assert "409" in statuses("DELETE", "/api/orgs/{orgId}/envs/{envId}")
    assert "409" in statuses("POST", "/api/orgs/{orgId}/apis/{apiId}/revisions/{revisionId}/deploy")
    assert "409" not in statuses("GET", "/api/orgs/{orgId}/envs")


def _calls(dependant: Any) -> list[Any]:
    out = []
    for sub in dependant.dependencies:
        out.append(sub.call)
        out.extend(_calls(sub))
    return out


class _WidgetCreate(WriteSchema):
    name: str


def test_a_router_added_later_is_documented_without_declaring_anything() -> None:
    """What another branch's router gets from being built the usual way: its failures, and
    the 409 it declares itself."""
    app = create_app(_settings(database_url="sqlite+aiosqlite:///:memory:"))
    router = APIRouter(prefix="/api/orgs/{orgId}/gadgets")

    @router.get("")
    async def list_gadgets(
        caller: Annotated[OrgCaller, Depends(require("api.read"))],
        query: ListQuery = Depends(list_query(ListSpec(frozenset({"name"}), "name"))),
    ) -> dict[str, str]:
        return {}

    @router.post("/{gadgetId}/copies", responses=problems(Conflict, detail="Name taken."))
    async def copy_gadget(
        gadgetId: str,  # noqa: N803 - the path parameter's name
        body: _WidgetCreate,
        caller: Annotated[OrgCaller, Depends(require("api.create"))],
    ) -> dict[str, str]:
        return {}

    app.include_router(router)
    paths = app.openapi()["paths"]
    listed = paths["/api/orgs/{orgId}/gadgets"]["get"]
    assert set(listed["responses"]) == {"200", "400", "401", "403", "404"}
    assert listed["security"] == [{"bearer": []}]
    copied = paths["/api/orgs/{orgId}/gadgets/{gadgetId}/copies"]["post"]
    assert set(copied["responses"]) == {"200", "400", "401", "403", "404", "409", "413", "415"}
    assert copied["responses"]["409"]["description"] == "Name taken."
    for operation in (listed, copied):
        for status, response in operation["responses"].items():
            if status != "200":
                assert list(response["content"]) == ["application/problem+json"], status


def test_lists_document_their_page_size_and_sort() -> None:
    """A ``ListSpec`` reads the raw query string, which FastAPI cannot see: the document
    says what it reads, so that clients (and schemathesis) send them."""
    for method, path, operation in _operations():
        if path.endswith("/envs") and method == "GET":
            query = {p["name"]: p for p in operation["parameters"] if p["in"] == "query"}
            assert set(query) == {"page", "size", "sort"}
            assert query["size"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 100}
            break
    else:
        raise AssertionError("no environment list")
