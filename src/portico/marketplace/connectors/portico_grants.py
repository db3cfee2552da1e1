"""How the ``portico`` connector gives a portal app access on a management service (the
methods ``grant``, ``withdraw``, ``set_key``, ``remove_app``, ``usage`` of ``portico.py``).

Everything happens in the organisation of the connection, through its HTTP API
(``/work/shared/design/management-api.md``, "Products, developers, apps, consumers"), with
the connection's service account, which needs ``developer.manage`` (developers and apps),
``product.manage`` (an API's implied product, its deployment) and ``analytics.read``:

* the **developer** is the portal account, found by its email (``GET …/developers?email=``)
  or created with its first and last name;
* the **environment** is where the access is used: for an API, the environment it is live
  in (the first of its deployments, as the service lists them); for a product, the first
  environment it is deployed to. Nothing to choose in the connection's settings: access
  follows where the API is served;
* the **app** has the portal app's name and holds its ``key-auth`` key (the management
  service accepts a supplied key, ``{"key-auth": {"key": ...}}``, and stores its hash); one
  per portal app and environment, remembered by the caller (``Grantee.known_apps``) and
  found again by name when that memory is lost;
* the **product**: a product node's own remote product; for an API node, the API's
  *implied product*, created once per API (named ``portal-<api id>``, ``apiIds: [api]``,
  quota unlimited, ``limit: -1``, unless the node sets one) and deployed to the
  environment. The app gets it in its ``{productId: rank}`` map, after those it has.

Every step reads before it writes, so a grant run again after a failure halfway finishes
the work instead of doing it twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

from portico.marketplace.connectors.base import ConnectorError, Outbound, json_object
from portico.marketplace.connectors.provisioning import (
    WINDOWS,
    Granted,
    Grantee,
    Target,
    Usage,
    Window,
)

#: the implied product of an API is named after it (product names are unique per org)
IMPLIED_PREFIX = "portal-"
#: an implied product without a quota on the node: unlimited, still authenticated
UNLIMITED = {"limit": -1, "interval": 1, "interval_unit": "month"}
_QUOTA_KEYS = ("limit", "interval", "interval_unit", "key_scope")
_UNIT_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


class Remote:
    """One organisation of a management service, as the connection reaches it."""

    def __init__(self, outbound: Outbound, org_url: str, headers: Mapping[str, str]) -> None:
        self.outbound = outbound
        self.org = org_url
        self.headers = dict(headers)

    async def read(self, path: str, what: str, *, missing_ok: bool = False) -> Any:
        """``GET`` an organisation path; None for a 404 when ``missing_ok``."""
        status, body = await self.outbound.read_json(f"{self.org}{path}", headers=self.headers)
        if status == 404 and missing_ok:
            return None
        _expect(status, body, (200,), what)
        return body

    async def write(
        self,
        method: str,
        path: str,
        what: str,
        *,
        body: Any = None,
        expect: tuple[int, ...] = (200, 201),
    ) -> tuple[int, Any]:
        status, answer = await self.outbound.send_json(
            method, f"{self.org}{path}", body=body, headers=self.headers
        )
        _expect(status, answer, expect, what)
        return status, answer


def _expect(status: int, body: Any, expected: tuple[int, ...], what: str) -> None:
    if status in expected:
        return
    detail = body.get("detail") if isinstance(body, dict) else None
    said = f": {detail}" if isinstance(detail, str) and detail else ""
    if status == 401:
        raise ConnectorError(
            f"the management service refused the connection's token while {what}", field="token"
        )
    if status == 403:
        raise ConnectorError(
            f"the connection's service account may not do this ({what}){said}; it needs "
            "developer.manage, product.manage and analytics.read",
            field="token",
        )
    raise ConnectorError(f"the management service answered {status} while {what}{said}")


# ------------------------------------------------------------------------------------ grant


async def grant(remote: Remote, grantee: Grantee, target: Target) -> Granted:
    # what does not depend on each other is read together: each call is a round trip
    (environment, product_id), developer_id = await asyncio.gather(
        _where(remote, target), _developer(remote, grantee)
    )
    app = await _app(remote, grantee, developer_id, environment, product_id)
    await _add_product(remote, app, product_id)
    return Granted(
        environment_id=environment,
        developer_id=developer_id,
        app_id=str(app["id"]),
        product_id=product_id,
    )


async def _where(remote: Remote, target: Target) -> tuple[str, str]:
    """The environment access is given in, and the product to grant there."""
    if target.kind == "product":
        return await _product_environment(remote, target.remote_id), target.remote_id
    environment, implied = await asyncio.gather(
        _api_environment(remote, target.remote_id),
        _product_named(remote, f"{IMPLIED_PREFIX}{target.remote_id}"),
    )
    return environment, await _implied_product(remote, target, environment, implied)


async def _api_environment(remote: Remote, api_id: str) -> str:
    what = f"reading API {api_id}"
    api = await remote.read(f"/apis/{quote(api_id)}", what, missing_ok=True)
    if api is None:
        raise ConnectorError(f"the API {api_id} no longer exists on the management service")
    deployments = json_object(api, what).get("deployments") or []
    for deployment in deployments:
        if isinstance(deployment, dict) and isinstance(deployment.get("environmentId"), str):
            return str(deployment["environmentId"])
    raise ConnectorError(
        f"the API {api_id} is not live in any environment of the management service: "
        "access is given once it is deployed"
    )


async def _product_environment(remote: Remote, product_id: str) -> str:
    what = f"reading product {product_id}"
    product = await remote.read(f"/products/{quote(product_id)}", what, missing_ok=True)
    if product is None:
        raise ConnectorError(f"the product {product_id} no longer exists on the management service")
    for environment in json_object(product, what).get("environments") or []:
        if isinstance(environment, str):
            return environment
    raise ConnectorError(
        f"the product {product_id} is not deployed in any environment of the management "
        "service: access is given once it is"
    )


async def _implied_product(
    remote: Remote, target: Target, environment: str, product: dict[str, Any] | None
) -> str:
    """The API's implied product (``product``, as listed), made when missing and deployed
    to ``environment`` when it is not yet."""
    name = f"{IMPLIED_PREFIX}{target.remote_id}"
    if product is None:
        quota = {k: v for k, v in (target.quota or UNLIMITED).items() if k in _QUOTA_KEYS}
        title = (target.title or target.remote_id)[:100].strip() or target.remote_id
        status, made = await remote.write(
            "POST",
            "/products",
            f"creating the implied product of API {target.remote_id}",
            body={
                "name": name,
                "displayName": f"{title} (portal access)",
                "description": "Access to one API, for the developer portal's subscriptions.",
                "apiIds": [target.remote_id],
                "quota": quota,
            },
            expect=(201, 409),
        )
        # 409: made meanwhile by another attempt; read it back
        product = made if status == 201 else await _product_named(remote, name)
        if product is None:
            raise ConnectorError(f"the product {name} cannot be found after it was created")
    product = json_object(product, f"the product {name}")
    product_id = str(product["id"])
    if environment not in (product.get("environments") or []):
        await remote.write(
            "POST",
            f"/envs/{quote(environment)}/products/{quote(product_id)}/deploy",
            f"deploying product {name}",
            expect=(200,),
        )
    return product_id


async def _product_named(remote: Remote, name: str) -> dict[str, Any] | None:
    listed = await remote.read(f"/products?name={quote(name)}&size=1", "listing products")
    items = json_object(listed, "the products").get("items") or []
    return json_object(items[0], "a product") if items else None


def _names(grantee: Grantee) -> tuple[str, str]:
    first, last = grantee.first_name.strip()[:64], grantee.last_name.strip()[:64]
    fallback = grantee.email.split("@", 1)[0][:64] or "developer"
    return (first or fallback).strip(), (last or "-").strip()


async def _developer(remote: Remote, grantee: Grantee) -> str:
    email = grantee.email.strip().lower()
    found = await _developer_by_email(remote, email)
    if found is not None:
        return found
    first, last = _names(grantee)
    status, made = await remote.write(
        "POST",
        "/developers",
        f"creating the developer {email}",
        body={"firstName": first, "lastName": last, "email": email},
        expect=(201, 409),
    )
    if status == 201:
        return str(json_object(made, "the developer")["id"])
    found = await _developer_by_email(remote, email)
    if found is None:
        raise ConnectorError(f"the developer {email} cannot be found after it was created")
    return found


async def _developer_by_email(remote: Remote, email: str) -> str | None:
    listed = await remote.read(f"/developers?email={quote(email)}&size=1", "listing developers")
    items = json_object(listed, "the developers").get("items") or []
    return str(json_object(items[0], "a developer")["id"]) if items else None


async def _app(
    remote: Remote, grantee: Grantee, developer_id: str, environment: str, product_id: str
) -> dict[str, Any]:
    """The remote app of this portal app in ``environment``: the one remembered, else one
    of its name (given the portal app's key), else a new one holding the key and the
    product already (one round trip less)."""
    known = grantee.known_apps.get(environment)
    if known is not None:
        app = await remote.read(f"/apps/{quote(known)}", f"reading app {known}", missing_ok=True)
        if app is not None:
            return json_object(app, f"the app {known}")
    apps_path = f"/developers/{quote(developer_id)}/envs/{quote(environment)}/apps"
    status, made = await remote.write(
        "POST",
        apps_path,
        f"creating the app {grantee.app_name}",
        body={
            "name": grantee.app_name,
            "products": {product_id: 0},
            "plugins": {"key-auth": {"key": grantee.app_key}},
        },
        expect=(201, 409),
    )
    if status == 201:
        return json_object(made, f"the app {grantee.app_name}")
    # an app of that name exists (made by an attempt whose outcome was lost): take it and
    # make sure it holds the portal app's key
    listed = await remote.read(f"{apps_path}?size=100", "listing the developer's apps")
    for item in json_object(listed, "the apps").get("items") or []:
        app = json_object(item, "an app")
        if app.get("name") == grantee.app_name:
            await set_key(remote, str(app["id"]), grantee.app_key)
            return app
    raise ConnectorError(
        f"the app {grantee.app_name} cannot be created: its key is held by another consumer"
    )


async def _add_product(remote: Remote, app: Mapping[str, Any], product_id: str) -> None:
    products = {str(k): int(v) for k, v in (app.get("products") or {}).items()}
    if product_id in products and app.get("status") == "active":
        return
    rank = products.get(product_id, max(products.values(), default=-1) + 1)
    await remote.write(
        "PATCH",
        f"/apps/{quote(str(app['id']))}",
        f"granting product {product_id}",
        body={"products": {**products, product_id: rank}, "status": "active"},
        expect=(200,),
    )


# ------------------------------------------------------------------------ taking access back


async def withdraw(remote: Remote, app_id: str, product_id: str) -> None:
    app = await remote.read(f"/apps/{quote(app_id)}", f"reading app {app_id}", missing_ok=True)
    if app is None:
        return
    app = json_object(app, f"the app {app_id}")
    products = {str(k): int(v) for k, v in (app.get("products") or {}).items()}
    remaining = {k: v for k, v in products.items() if k != product_id}
    if remaining == products and (remaining or app.get("status") == "revoked"):
        return
    change: dict[str, Any] = {"products": remaining}
    if not remaining:  # nothing left to call: the key stops working at all
        change["status"] = "revoked"
    await remote.write(
        "PATCH",
        f"/apps/{quote(app_id)}",
        f"withdrawing product {product_id}",
        body=change,
        expect=(200, 404),
    )


async def set_key(remote: Remote, app_id: str, key: str) -> None:
    await remote.write(
        "PATCH",
        f"/apps/{quote(app_id)}",
        f"setting the key of app {app_id}",
        body={"plugins": {"key-auth": {"key": key}}},
        expect=(200, 404),
    )


async def remove_app(remote: Remote, app_id: str) -> None:
    await remote.write(
        "DELETE", f"/apps/{quote(app_id)}", f"deleting app {app_id}", expect=(204, 404)
    )


# ------------------------------------------------------------------------------------ usage


async def usage(
    remote: Remote, app_id: str, product_id: str, window: Window, now: datetime
) -> Usage:
    """Read from the management analytics: requests, errors (status ≥ 400) and the response
    time's percentiles of the app on the product's traffic over the window; the quota's
    limit and what the app used of its current quota window."""
    product = await remote.read(
        f"/products/{quote(product_id)}", f"reading product {product_id}", missing_ok=True
    )
    if product is None:
        raise ConnectorError(f"the product {product_id} no longer exists on the management service")
    product = json_object(product, f"the product {product_id}")
    start = now - timedelta(seconds=WINDOWS[window])
    scope: list[dict[str, Any]] = [
        {"column": "app_id", "operator": "EQ", "value": [app_id]},
        {"column": "product_name", "operator": "EQ", "value": [str(product.get("name", ""))]},
    ]
    errors: list[dict[str, Any]] = [
        *scope,
        {"column": "response_status_code", "operator": "GTE", "value": [400]},
    ]
    quota = product.get("quota") if isinstance(product.get("quota"), dict) else None
    limit = int(quota["limit"]) if quota and int(quota.get("limit", -1)) >= 0 else None
    quota_start = _quota_window(now, quota) if quota and limit is not None else None
    requests, failed, p50, p95, p99, used = await asyncio.gather(
        _metric(remote, "requests-count", start, now, scope),
        _metric(remote, "requests-count", start, now, errors),
        _metric(remote, "response-time", start, now, scope, "P50"),
        _metric(remote, "response-time", start, now, scope, "P95"),
        _metric(remote, "response-time", start, now, scope, "P99"),
        _metric(remote, "requests-count", quota_start, now, scope)
        if quota_start is not None
        else _nothing(),
    )
    return Usage(
        window=window,
        requests=int(requests or 0),
        errors=int(failed or 0),
        latency_ms={"p50": p50, "p95": p95, "p99": p99},
        quota_limit=limit,
        quota_used=int(used or 0) if limit is not None else None,
    )


async def _nothing() -> float | None:
    return None


async def _metric(
    remote: Remote,
    metric: str,
    start: datetime,
    end: datetime,
    filters: list[dict[str, Any]],
    aggregation: str | None = None,
) -> float | None:
    body: dict[str, Any] = {
        "startTime": start.isoformat(),
        "endTime": end.isoformat(),
        "filters": filters,
        "excludeTimeUnit": True,
    }
    if aggregation is not None:
        body["aggregation"] = aggregation
    _, answer = await remote.write(
        "POST", f"/analytics/metrics/{metric}", f"reading {metric}", body=body, expect=(200,)
    )
    value = json_object(answer, f"the {metric} result").get("value")
    return float(value) if isinstance(value, int | float) else None


def _quota_window(now: datetime, quota: Mapping[str, Any]) -> datetime:
    """The start of the fixed, UTC-aligned quota window holding ``now``."""
    interval = max(int(quota.get("interval", 1)), 1)
    unit = str(quota.get("interval_unit", "minute"))
    now = now.astimezone(UTC)
    if unit == "month":
        months = now.year * 12 + now.month - 1
        start = months - months % interval
        return datetime(start // 12, start % 12 + 1, 1, tzinfo=UTC)
    length = interval * _UNIT_SECONDS.get(unit, 60)
    seconds = int(now.timestamp())
    return datetime.fromtimestamp(seconds - seconds % length, tz=UTC)
