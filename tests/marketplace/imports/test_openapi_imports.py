"""Imports from an ``openapi`` connection: one API per document URL (api_id = uuid5 of the
URL), each document made self-contained (relative and external ``$ref``s brought in, cycles
kept as local references), and the documents that cannot be: a referred-to document that is
broken, a reference to an address the SSRF guard refuses, a reference that points at
nothing, a cycle that cannot be written out, a document broken after the check."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.marketplace.conftest import SiteAccount, url
from tests.marketplace.imports.conftest import CONNECTIONS, Steerable, connect

PETSTORE = """\
openapi: 3.0.3
info: {title: Petstore, version: "1.2.0", description: Pets.}
paths:
  /pets:
    get:
      parameters:
        - $ref: "common/params.json#/components/parameters/Limit"
      responses:
        "200":
          description: the pets
          content:
            application/json:
              schema:
                type: array
                items: {$ref: "schemas/pet.yaml"}
        default:
          $ref: "common/errors.json#/components/responses/Problem"
  /pets/{id}:
    $ref: "paths/pet-by-id.yaml"
components:
  schemas:
    Local: {type: string}
    UsesLocal: {$ref: "#/components/schemas/Local"}
"""
PET = """\
type: object
properties:
  name: {type: string}
  children:
    type: array
    items: {$ref: "pet.yaml"}
  tag: {$ref: "#/definitions/Tag"}
definitions:
  Tag: {type: string}
"""
PET_BY_ID = """\
get:
  responses:
    "200":
      description: one pet
      content:
        application/json:
          schema: {$ref: "../schemas/pet.yaml"}
"""
PARAMS = {
    "components": {
        "parameters": {"Limit": {"name": "limit", "in": "query", "schema": {"type": "integer"}}}
    }
}
ERRORS = {
    "components": {
        "responses": {
            "Problem": {
                "description": "a problem",
                "content": {
                    "application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}
                },
            }
        },
        "schemas": {"Problem": {"type": "object"}},
    }
}


def referring(title: str, ref: str, *, where: str = "schema") -> dict[str, Any]:
    """A valid document whose one response refers to ``ref`` (as a schema, or as the path
    item itself)."""
    ok: dict[str, Any] = {"description": "ok"}
    if where == "schema":
        ok["content"] = {"application/json": {"schema": {"$ref": ref}}}
        paths: dict[str, Any] = {"/x": {"get": {"responses": {"200": ok}}}}
    else:
        paths = {"/x": {"$ref": ref}}
    return {"openapi": "3.1.0", "info": {"title": title, "version": "1"}, "paths": paths}


def serve_petstore(steerable: Steerable) -> str:
    documents = steerable.board.documents
    documents["/specs/petstore.yaml"] = PETSTORE
    documents["/specs/schemas/pet.yaml"] = PET
    documents["/specs/paths/pet-by-id.yaml"] = PET_BY_ID
    documents["/specs/common/params.json"] = PARAMS
    documents["/specs/common/errors.json"] = ERRORS
    return f"{steerable.base_url}/specs/petstore.yaml"


def refs(value: Any) -> list[str]:
    if isinstance(value, dict):
        own = [value["$ref"]] if isinstance(value.get("$ref"), str) else []
        return own + [r for v in value.values() for r in refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in refs(v)]
    return []


def resolve(document: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    value: Any = document
    for token in ref[2:].split("/"):
        value = value[token.replace("~1", "/").replace("~0", "~")]
    return value


def documents_connection(name: str, *urls: str) -> dict[str, Any]:
    return {"name": name, "source": "openapi", "config": {"urls": list(urls)}}


async def test_a_document_with_external_refs_is_stored_self_contained(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, steerable: Steerable
) -> None:
    petstore = serve_petstore(steerable)
    connection = await connect(admin_api, site_admin, documents_connection("pets", petstore))
    api_id = str(uuid.uuid5(uuid.NAMESPACE_URL, petstore))

    listed = await admin_api.get(
        url(f"{CONNECTIONS}/{connection['id']}/remote/apis"), headers=site_admin.headers
    )
    [entry] = listed.json()["data"]
    assert (entry["api_id"], entry["title"], entry["revision"]) == (api_id, "Petstore", "1.2.0")

    created = await admin_api.post(
        url(f"{CONNECTIONS}/{connection['id']}/apis/import"),
        json={"api_id": api_id},
        headers=site_admin.headers,
    )
    assert created.status_code == 201, created.text
    node = created.json()["data"]
    assert (node["title"], node["version"], node["overview"]) == ("Petstore", "1.2.0", "Pets.")
    assert node["source"]["revision"] == "1.2.0"
    doc = node["documentation"]
    # self-contained: every reference is local and points at something
    assert refs(doc)
    for ref in refs(doc):
        resolve(doc, ref)
    pets = doc["paths"]["/pets"]["get"]
    assert pets["parameters"] == [{"$ref": "#/components/parameters/Limit"}]
    assert pets["responses"]["200"]["content"]["application/json"]["schema"]["items"] == {
        "$ref": "#/components/schemas/pet"
    }
    assert pets["responses"]["default"] == {"$ref": "#/components/responses/Problem"}
    schemas = doc["components"]["schemas"]
    assert set(schemas) == {"Local", "UsesLocal", "pet", "Tag", "Problem"}
    # the cycle (a pet's children are pets) is a reference to the component itself
    assert schemas["pet"]["properties"]["children"]["items"] == {"$ref": "#/components/schemas/pet"}
    assert schemas["pet"]["properties"]["tag"] == {"$ref": "#/components/schemas/Tag"}
    assert schemas["UsesLocal"] == {"$ref": "#/components/schemas/Local"}
    # the path item in a file of its own is written in place, its schema the same component
    by_id = doc["paths"]["/pets/{id}"]["get"]["responses"]["200"]
    assert by_id["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/pet"}
    assert doc["components"]["parameters"]["Limit"]["name"] == "limit"
    # the referred-to documents were each fetched once
    assert steerable.board.seen["/specs/schemas/pet.yaml"] == 1


async def test_documents_that_cannot_be_made_self_contained_are_reported(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, steerable: Steerable
) -> None:
    petstore = serve_petstore(steerable)
    documents = steerable.board.documents
    base = steerable.base_url
    documents["/specs/broken.yaml"] = "type: [object\n  properties: {\n"
    documents["/specs/broken-ref.json"] = referring("Broken", "broken.yaml")
    secret = f"{steerable.refused_base_url}/specs/secret.json"
    documents["/specs/secret.json"] = {"type": "string"}
    documents["/specs/ssrf.json"] = referring("Ssrf", secret)
    documents["/specs/dangling.json"] = referring("Dangling", "#/components/schemas/Nope")
    documents["/specs/loop.json"] = referring("Loop", "loop-item.json", where="path")
    documents["/specs/loop-item.json"] = {"$ref": "loop-item.json"}
    names = ["broken-ref", "ssrf", "dangling", "loop"]
    urls = [petstore, *(f"{base}/specs/{n}.json" for n in names)]
    connection = await connect(admin_api, site_admin, documents_connection("mixed", *urls))

    imported = await admin_api.post(
        url(f"{CONNECTIONS}/{connection['id']}/apis/import/all"), headers=site_admin.headers
    )
    assert imported.status_code == 200, imported.text
    report = {i["api_id"]: i for i in imported.json()["data"]}
    outcome = {
        name: report[str(uuid.uuid5(uuid.NAMESPACE_URL, address))]
        for name, address in zip(["petstore", *names], urls, strict=True)
    }
    assert outcome["petstore"]["outcome"] == "created"
    failed = {f["id"]: f for f in imported.json()["meta"]["failed"]}
    assert len(failed) == 4
    for name in names:
        assert outcome[name]["outcome"] == "failed"
        assert failed[outcome[name]["api_id"]]["status"] == 502
        assert "gateway connection 'mixed'" in outcome[name]["detail"]
    assert "broken.yaml" in outcome["broken-ref"]["detail"]
    assert "cannot be read" in outcome["broken-ref"]["detail"]
    assert "may not be reached" in outcome["ssrf"]["detail"]
    assert "127.0.0.2" in outcome["ssrf"]["detail"]
    assert "/specs/secret.json" not in steerable.board.seen  # refused before any connection
    assert "#/components/schemas/Nope" in outcome["dangling"]["detail"]
    assert "points at nothing" in outcome["dangling"]["detail"]
    assert "cycle" in outcome["loop"]["detail"]

    one = await admin_api.post(
        url(f"{CONNECTIONS}/{connection['id']}/apis/import"),
        json={"api_id": outcome["ssrf"]["api_id"]},
        headers=site_admin.headers,
    )
    assert one.status_code == 502, one.text
    assert "may not be reached" in one.json()["detail"]


async def test_a_document_broken_after_the_check_is_listed_with_its_problem(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, steerable: Steerable
) -> None:
    good = {"openapi": "3.0.3", "info": {"title": "Later", "version": "1"}, "paths": {}}
    steerable.board.documents["/later.json"] = good
    address = f"{steerable.base_url}/later.json"
    connection = await connect(admin_api, site_admin, documents_connection("later", address))
    steerable.board.documents["/later.json"] = "openapi: [3.0.3"

    listed = await admin_api.get(
        url(f"{CONNECTIONS}/{connection['id']}/remote/apis"), headers=site_admin.headers
    )
    [entry] = listed.json()["data"]
    assert entry["title"] == address
    assert "not valid JSON or YAML" in entry["problem"]
    imported = await admin_api.post(
        url(f"{CONNECTIONS}/{connection['id']}/apis/import/all"), headers=site_admin.headers
    )
    [failure] = imported.json()["meta"]["failed"]
    assert failure["status"] == 502
    assert "not valid JSON or YAML" in failure["detail"]
