"""OpenAPI 3.x import: the pure converter behind ``POST …/apis/from-spec``.

A petstore document in YAML, in JSON and as a mapping converts to the same service and
routes; each refusal names its place with an RFC 6901 pointer into the document and reads as
the contract says (``desc: must be at most 256 characters long``); and, as a property,
whatever is fed to :func:`parse_document` and :func:`convert`, the only exception is
``ValidationFailed``.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from portico.core.errors import ValidationFailed
from portico.management.api.openapi_import import (
    DESC_TOO_LONG,
    MAX_DEPTH,
    MAX_DOCUMENT_BYTES,
    ImportedApi,
    convert,
    parse_document,
)

PETSTORE_YAML = """\
openapi: 3.0.3
info:
  title: Swagger Petstore
  description: A sample API that uses a petstore as an example.
  version: 1.0.0
  license:
    name: MIT
servers:
  - url: http://petstore.example.com/v1
x-portico:
  plugins:
    key-auth:
      header: apikey
paths:
  /pets:
    get:
      operationId: listPets
      summary: List all pets
      tags: [pets]
      parameters:
        - name: limit
          in: query
          required: false
          schema: {type: integer, maximum: 100, format: int32}
      x-portico:
        plugins:
          limit-count:
            count: 100
            time_window: 60
            rejected_code: 429
      responses:
        200:
          description: A paged array of pets
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Pets"}
        default:
          description: unexpected error
    post:
      operationId: createPets
      summary: Create a pet
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Pet"}
      responses:
        201: {description: Null response}
  /pets/{petId}:
    parameters:
      - name: petId
        in: path
        required: true
        schema: {type: string}
    get:
      operationId: showPetById
      summary: Info for a specific pet
      responses:
        200:
          description: Expected response to a valid request
    delete:
      description: Deletes a pet.
      responses:
        204: {description: Deleted}
  /stores/{storeId}/pets/{petId}:
    put:
      responses:
        200: {description: Moved}
components:
  schemas:
    Pet:
      type: object
      required: [id, name]
      properties:
        id: {type: integer, format: int64}
        name: {type: string}
    Pets:
      type: array
      maxItems: 100
      items: {$ref: "#/components/schemas/Pet"}
"""

PETSTORE: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {
        "title": "Swagger Petstore",
        "description": "A sample API that uses a petstore as an example.",
        "version": "1.0.0",
        "license": {"name": "MIT"},
    },
    "servers": [{"url": "http://petstore.example.com/v1"}],
    "x-portico": {"plugins": {"key-auth": {"header": "apikey"}}},
    "paths": {
        "/pets": {
            "get": {
                "operationId": "listPets",
                "summary": "List all pets",
                "tags": ["pets"],
                "parameters": [
                    {
                        "name": "limit",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "integer", "maximum": 100, "format": "int32"},
                    }
                ],
                "x-portico": {
                    "plugins": {
                        "limit-count": {"count": 100, "time_window": 60, "rejected_code": 429}
                    }
                },
                "responses": {
                    "200": {
                        "description": "A paged array of pets",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Pets"}}
                        },
                    },
                    "default": {"description": "unexpected error"},
                },
            },
            "post": {
                "operationId": "createPets",
                "summary": "Create a pet",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}
                    },
                },
                "responses": {"201": {"description": "Null response"}},
            },
        },
        "/pets/{petId}": {
            "parameters": [
                {"name": "petId", "in": "path", "required": True, "schema": {"type": "string"}}
            ],
            "get": {
                "operationId": "showPetById",
                "summary": "Info for a specific pet",
                "responses": {"200": {"description": "Expected response to a valid request"}},
            },
            "delete": {
                "description": "Deletes a pet.",
                "responses": {"204": {"description": "Deleted"}},
            },
        },
        "/stores/{storeId}/pets/{petId}": {
            "put": {"responses": {"200": {"description": "Moved"}}},
        },
    },
    "components": {
        "schemas": {
            "Pet": {
                "type": "object",
                "required": ["id", "name"],
                "properties": {
                    "id": {"type": "integer", "format": "int64"},
                    "name": {"type": "string"},
                },
            },
            "Pets": {
                "type": "array",
                "maxItems": 100,
                "items": {"$ref": "#/components/schemas/Pet"},
            },
        }
    },
}
PETSTORE_JSON = json.dumps(PETSTORE, indent=2)

EXPECTED_SERVICE_SPEC = {
    "name": "Swagger Petstore",
    "desc": "A sample API that uses a petstore as an example.",
    "plugins": {"key-auth": {"header": "apikey"}},
}
EXPECTED_ROUTE_SPEC = [
    {
        "name": "listPets",
        "desc": "List all pets",
        "uri": "/pets",
        "methods": ["GET"],
        "plugins": {"limit-count": {"count": 100, "time_window": 60, "rejected_code": 429}},
    },
    {
        "name": "createPets",
        "desc": "Create a pet",
        "uri": "/pets",
        "methods": ["POST"],
        "plugins": {},
    },
    {
        "name": "showPetById",
        "desc": "Info for a specific pet",
        "uri": "/pets/:petId",
        "methods": ["GET"],
        "plugins": {},
    },
    {
        "name": "DELETE /pets/:petId",
        "desc": "Deletes a pet.",
        "uri": "/pets/:petId",
        "methods": ["DELETE"],
        "plugins": {},
    },
    {
        "name": "PUT /stores/:storeId/pets/:petId",
        "uri": "/stores/:storeId/pets/:petId",
        "methods": ["PUT"],
        "plugins": {},
    },
]


def imported(raw: bytes | str | Mapping[str, Any]) -> ImportedApi:
    return convert(parse_document(raw))


def refusal(raw: bytes | str | Mapping[str, Any]) -> list[dict[str, str]]:
    """The errors of the ValidationFailed that importing ``raw`` raises."""
    with pytest.raises(ValidationFailed) as caught:
        imported(raw)
    error = caught.value
    assert error.status == 400
    assert error.errors, "a ValidationFailed always names at least one place"
    assert error.detail == error.errors[0]["detail"]
    return [dict(e) for e in error.errors]


def petstore(**changes: Any) -> dict[str, Any]:
    """A deep copy of the petstore with top-level keys replaced (``None`` removes one)."""
    document = copy.deepcopy(PETSTORE)
    for key, value in changes.items():
        key = key.replace("_", "-")
        if value is None:
            document.pop(key, None)
        else:
            document[key] = value
    return document


def minimal(paths: Any, **info: Any) -> dict[str, Any]:
    return {"openapi": "3.1.0", "info": {"title": "T", **info}, "paths": paths}


# --------------------------------------------------------------------------------------------
# The petstore


def test_petstore_in_yaml_converts_to_the_expected_specs() -> None:
    api = imported(PETSTORE_YAML)

    assert api.name == "Swagger Petstore"
    assert api.desc == "A sample API that uses a petstore as an example."
    assert api.service_spec == EXPECTED_SERVICE_SPEC
    assert api.route_spec == EXPECTED_ROUTE_SPEC


@pytest.mark.parametrize(
    "raw",
    [PETSTORE_JSON, PETSTORE_JSON.encode(), b"\xef\xbb\xbf" + PETSTORE_JSON.encode(), PETSTORE],
    ids=["json-text", "json-bytes", "json-bytes-with-bom", "mapping"],
)
def test_petstore_in_json_converts_to_the_same_specs(raw: bytes | str | dict[str, Any]) -> None:
    api = imported(raw)

    assert api.service_spec == EXPECTED_SERVICE_SPEC
    assert api.route_spec == EXPECTED_ROUTE_SPEC
    assert api.document == PETSTORE


def test_the_yaml_document_is_stored_as_its_json_equivalent() -> None:
    # YAML's ``200:`` response keys are integers; stored, they are the JSON keys "200".
    assert imported(PETSTORE_YAML).document == PETSTORE
    assert imported(PETSTORE_YAML) == imported(PETSTORE_JSON)


def test_the_stored_document_and_the_specs_share_nothing_with_the_input() -> None:
    source = petstore()
    api = imported(source)

    api.route_spec[0]["plugins"]["limit-count"]["count"] = 1
    api.service_spec["plugins"]["key-auth"]["header"] = "x"
    api.document["info"]["title"] = "changed"

    assert source == PETSTORE
    assert api.document["paths"]["/pets"]["get"]["x-portico"]["plugins"]["limit-count"] == {
        "count": 100,
        "time_window": 60,
        "rejected_code": 429,
    }
    assert api.document["x-portico"]["plugins"]["key-auth"] == {"header": "apikey"}


def test_every_route_carries_plugins_even_without_x_portico() -> None:
    api = imported(petstore(x_portico=None))

    assert api.service_spec["plugins"] == {}
    assert [route["plugins"] == {} for route in api.route_spec] == [
        False,
        True,
        True,
        True,
        True,
    ]
    assert all("plugins" in route for route in api.route_spec)


def test_routes_follow_the_document_order_of_paths_and_methods() -> None:
    api = imported(
        minimal(
            {
                "/b": {"post": {}, "get": {}},
                "/a": {"trace": {}, "delete": {}, "options": {}},
                "/": {"head": {}, "patch": {}, "put": {}},
            }
        )
    )

    assert [(route["uri"], route["methods"]) for route in api.route_spec] == [
        ("/b", ["POST"]),
        ("/b", ["GET"]),
        ("/a", ["TRACE"]),
        ("/a", ["DELETE"]),
        ("/a", ["OPTIONS"]),
        ("/", ["HEAD"]),
        ("/", ["PATCH"]),
        ("/", ["PUT"]),
    ]
    assert [route["name"] for route in api.route_spec][:2] == ["POST /b", "GET /b"]


def test_empty_paths_give_no_routes_and_no_description_gives_an_empty_desc() -> None:
    api = imported({"openapi": "3.0.0", "info": {"title": "Empty"}, "paths": {}})

    assert api.route_spec == []
    assert api.service_spec == {"name": "Empty", "desc": "", "plugins": {}}


def test_path_item_fields_and_extensions_are_accepted_and_not_routes() -> None:
    api = imported(
        minimal(
            {
                "/pets": {
                    "summary": "Pets",
                    "description": "All pets",
                    "servers": [{"url": "https://pets.example.com"}],
                    "parameters": [],
                    "x-internal": True,
                    "get": {},
                }
            }
        )
    )

    assert api.route_spec == [
        {"name": "GET /pets", "uri": "/pets", "methods": ["GET"], "plugins": {}}
    ]


def test_title_and_descriptions_are_trimmed() -> None:
    api = imported(
        minimal(
            {"/pets": {"get": {"summary": "  List pets\n"}}},
            description="A block scalar ends with a newline\n",
        )
        | {"info": {"title": "  Pets  ", "description": "  Pets API\n"}}
    )

    assert api.name == "Pets"
    assert api.desc == "Pets API"
    assert api.route_spec[0]["desc"] == "List pets"


def test_an_empty_summary_falls_back_to_the_description() -> None:
    api = imported(minimal({"/pets": {"get": {"summary": " ", "description": "Lists pets"}}}))

    assert api.route_spec[0]["desc"] == "Lists pets"


def test_a_long_description_is_fine_when_the_summary_is_used() -> None:
    api = imported(minimal({"/pets": {"get": {"summary": "List pets", "description": "d" * 5000}}}))

    assert api.route_spec[0]["desc"] == "List pets"


def test_yaml_timestamps_stay_strings_and_empty_plugin_configs_are_objects() -> None:
    api = imported(
        "openapi: 3.1.0\n"
        "info: {title: Dated, version: 2024-01-31}\n"
        "x-portico:\n"
        "  plugins:\n"
        "    key-auth:\n"
        "paths:\n"
        "  /a:\n"
        "    get:\n"
        "      x-portico: {plugins: }\n"
        "      x-released: 2001-12-14t21:59:43.10-05:00\n"
    )

    assert api.document["info"]["version"] == "2024-01-31"
    assert api.document["paths"]["/a"]["get"]["x-released"] == "2001-12-14t21:59:43.10-05:00"
    assert api.service_spec["plugins"] == {"key-auth": {}}
    assert api.route_spec[0]["plugins"] == {}


@pytest.mark.parametrize(
    ("path", "uri"),
    [
        ("/", "/"),
        ("/pets", "/pets"),
        ("/pets/", "/pets/"),
        ("/pets/{petId}", "/pets/:petId"),
        ("/{a}/{b}/c", "/:a/:b/c"),
        ("/users/{user-id}/files/{file.name}", "/users/:user-id/files/:file.name"),
    ],
)
def test_path_templates_become_colon_segments(path: str, uri: str) -> None:
    (route,) = imported(minimal({path: {"get": {}}})).route_spec

    assert route["uri"] == uri
    assert route["name"] == f"GET {uri}"


@pytest.mark.parametrize("version", ["3.0.0", "3.0.3", "3.1.0", "3.1.1"])
def test_openapi_3_0_and_3_1_are_accepted(version: str) -> None:
    document = minimal({}) | {"openapi": version}

    assert imported(document).route_spec == []


# --------------------------------------------------------------------------------------------
# The 256-character rule, read exactly as the contract says


@pytest.mark.parametrize("length", [255, 256])
def test_info_description_of_at_most_256_characters_is_the_desc(length: int) -> None:
    api = imported(minimal({}, description="d" * length))

    assert api.desc == "d" * length
    assert api.service_spec["desc"] == "d" * length


def test_info_description_of_257_characters_is_refused_with_the_exact_detail() -> None:
    errors = refusal(minimal({}, description="d" * 257))

    assert errors == [{"pointer": "/info/description", "detail": DESC_TOO_LONG}]
    assert DESC_TOO_LONG == "desc: must be at most 256 characters long"


def test_a_257_character_description_in_yaml_reads_the_same() -> None:
    text = PETSTORE_YAML.replace(
        "description: A sample API that uses a petstore as an example.",
        "description: " + "x" * 257,
    )

    with pytest.raises(ValidationFailed) as caught:
        imported(text)

    assert caught.value.detail == "desc: must be at most 256 characters long"
    assert caught.value.errors == [{"pointer": "/info/description", "detail": DESC_TOO_LONG}]


@pytest.mark.parametrize("length", [1, 256])
def test_operation_summary_of_at_most_256_characters_is_the_route_desc(length: int) -> None:
    document = petstore()
    document["paths"]["/pets"]["get"]["summary"] = "s" * length

    assert imported(document).route_spec[0]["desc"] == "s" * length


def test_operation_summary_of_257_characters_is_refused_at_the_summary() -> None:
    document = petstore()
    document["paths"]["/pets"]["get"]["summary"] = "s" * 257

    assert refusal(document) == [{"pointer": "/paths/~1pets/get/summary", "detail": DESC_TOO_LONG}]


def test_operation_description_used_as_desc_is_held_to_256_characters() -> None:
    document = petstore()
    document["paths"]["/pets/{petId}"]["delete"]["description"] = "d" * 256
    assert imported(document).route_spec[3]["desc"] == "d" * 256

    document["paths"]["/pets/{petId}"]["delete"]["description"] = "d" * 257
    assert refusal(document) == [
        {"pointer": "/paths/~1pets~1{petId}/delete/description", "detail": DESC_TOO_LONG}
    ]


# --------------------------------------------------------------------------------------------
# Documents that are not OpenAPI 3.x


def test_swagger_2_is_named_as_such() -> None:
    swagger = {"swagger": "2.0", "info": {"title": "Old", "version": "1"}, "paths": {}}

    assert refusal(swagger) == [
        {
            "pointer": "/swagger",
            "detail": "only OpenAPI 3.x documents can be imported; this is Swagger 2.0",
        }
    ]
    assert refusal("swagger: '2.0'\ninfo: {title: Old}\npaths: {}\n")[0]["pointer"] == "/swagger"


@pytest.mark.parametrize(
    ("openapi", "detail"),
    [
        (
            "3.2.0",
            "only OpenAPI 3.0.x and 3.1.x documents can be imported; this is openapi '3.2.0'",
        ),
        ("2.0", "only OpenAPI 3.0.x and 3.1.x documents can be imported; this is openapi '2.0'"),
        ("3.0", "only OpenAPI 3.0.x and 3.1.x documents can be imported; this is openapi '3.0'"),
        (3.1, 'openapi: must be a string such as "3.1.0"'),
        (None, 'openapi: must be a string such as "3.1.0"'),
    ],
)
def test_other_openapi_versions_are_refused(openapi: Any, detail: str) -> None:
    assert refusal(minimal({}) | {"openapi": openapi}) == [
        {"pointer": "/openapi", "detail": detail}
    ]


def test_a_document_without_openapi_is_refused() -> None:
    assert refusal(petstore(openapi=None)) == [
        {"pointer": "/openapi", "detail": "required property 'openapi' not found"}
    ]


# --------------------------------------------------------------------------------------------
# info and paths


def test_missing_info_title_is_refused_at_info_title() -> None:
    document = petstore()
    del document["info"]["title"]

    assert refusal(document) == [
        {"pointer": "/info/title", "detail": "required property 'title' not found"}
    ]


@pytest.mark.parametrize(
    ("info", "error"),
    [
        (None, {"pointer": "/info", "detail": "required property 'info' not found"}),
        ("Pets", {"pointer": "/info", "detail": "info: must be an object"}),
        ({"title": 5}, {"pointer": "/info/title", "detail": "title: must be a string"}),
        ({"title": "  "}, {"pointer": "/info/title", "detail": "title: must not be empty"}),
        (
            {"title": "t" * 101},
            {"pointer": "/info/title", "detail": "title: must be at most 100 characters long"},
        ),
        (
            {"title": "T", "description": ["x"]},
            {"pointer": "/info/description", "detail": "description: must be a string"},
        ),
    ],
)
def test_faulty_info_is_refused_at_its_place(info: Any, error: dict[str, str]) -> None:
    assert refusal(petstore(info=info)) == [error]


def test_a_title_of_100_characters_is_the_name() -> None:
    api = imported(minimal({}) | {"info": {"title": "t" * 100}})

    assert api.name == api.service_spec["name"] == "t" * 100


def test_missing_paths_is_refused_at_paths() -> None:
    assert refusal(petstore(paths=None)) == [
        {"pointer": "/paths", "detail": "required property 'paths' not found"}
    ]
    assert refusal(petstore(paths=["/pets"])) == [
        {"pointer": "/paths", "detail": "paths: must be an object"}
    ]


def test_a_path_without_a_leading_slash_is_refused() -> None:
    assert refusal(minimal({"pets": {"get": {}}})) == [
        {"pointer": "/paths/pets", "detail": "path 'pets' must start with '/'"}
    ]


def test_a_template_mixed_with_text_in_a_segment_is_refused_at_that_path() -> None:
    assert refusal(minimal({"/files/{name}.json": {"get": {}}})) == [
        {
            "pointer": "/paths/~1files~1{name}.json",
            "detail": "path templates must be whole segments",
        }
    ]


@pytest.mark.parametrize(
    ("path", "pointer", "detail"),
    [
        (
            "/v1/{model}:generate",
            "/paths/~1v1~1{model}:generate",
            "path templates must be whole segments",
        ),
        ("/a/{}", "/paths/~1a~1{}", "path templates must name a parameter"),
        ("/a/{b", "/paths/~1a~1{b", "path templates must be whole segments"),
        ("/a/{id}/b/{id}", "/paths/~1a~1{id}~1b~1{id}", "path parameter 'id' appears twice"),
        ("/a/:id", "/paths/~1a~1:id", "a literal path segment must not start with ':'"),
        (
            "/files/*",
            "/paths/~1files~1*",
            "a path must not end with '*' (a Portico URI reads it as a prefix match)",
        ),
    ],
)
def test_paths_that_would_not_mean_the_same_as_a_portico_uri_are_refused(
    path: str, pointer: str, detail: str
) -> None:
    assert refusal(minimal({path: {"get": {}}})) == [{"pointer": pointer, "detail": detail}]


def test_pointers_escape_tilde_and_slash() -> None:
    assert refusal(minimal({"/~user/{name}.txt": {"get": {}}}))[0]["pointer"] == (
        "/paths/~1~0user~1{name}.txt"
    )
    document = minimal({"/a~b/c": {"get": {"summary": "s" * 257}}})
    assert refusal(document)[0]["pointer"] == "/paths/~1a~0b~1c/get/summary"


def test_a_path_item_ref_is_not_supported() -> None:
    document = minimal({"/pets": {"$ref": "#/components/pathItems/Pets"}})

    assert refusal(document) == [
        {"pointer": "/paths/~1pets/$ref", "detail": "path item $ref is not supported"}
    ]


def test_unknown_path_item_keys_are_refused_rather_than_dropped() -> None:
    errors = refusal(minimal({"/pets": {"GET": {}, "query": {}}}))

    assert [e["pointer"] for e in errors] == ["/paths/~1pets/GET", "/paths/~1pets/query"]
    assert errors[0]["detail"] == (
        "unknown path item property 'GET'; "
        "operations are get, put, post, delete, options, head, patch, trace"
    )


def test_path_items_and_operations_must_be_objects() -> None:
    assert refusal(minimal({"/a": [], "/b": {"get": "x"}})) == [
        {"pointer": "/paths/~1a", "detail": "path item: must be an object"},
        {"pointer": "/paths/~1b/get", "detail": "operation: must be an object"},
    ]


def test_a_duplicate_operation_id_is_refused_at_the_second_one() -> None:
    document = petstore()
    document["paths"]["/pets/{petId}"]["delete"]["operationId"] = "listPets"

    assert refusal(document) == [
        {
            "pointer": "/paths/~1pets~1{petId}/delete/operationId",
            "detail": "operationId 'listPets' is not unique: "
            "the operation at /paths/~1pets/get uses it too",
        }
    ]


@pytest.mark.parametrize(
    ("operation_id", "detail"),
    [(7, "operationId: must be a string"), ("  ", "operationId: must not be empty")],
)
def test_a_faulty_operation_id_is_refused(operation_id: Any, detail: str) -> None:
    document = minimal({"/a": {"get": {"operationId": operation_id}}})

    assert refusal(document) == [{"pointer": "/paths/~1a/get/operationId", "detail": detail}]


def test_a_non_string_summary_is_refused() -> None:
    assert refusal(minimal({"/a": {"get": {"summary": ["x"]}}})) == [
        {"pointer": "/paths/~1a/get/summary", "detail": "summary: must be a string"}
    ]


def test_all_problems_are_reported_together_in_document_order() -> None:
    document = {
        "openapi": "3.1.0",
        "info": {"title": "", "description": "d" * 300},
        "x-portico": {"plugin": {}},
        "paths": {
            "/a/{x}.json": {"get": {}},
            "b": {},
            "/c": {"get": {"summary": "s" * 300}},
        },
    }

    assert [e["pointer"] for e in refusal(document)] == [
        "/info/title",
        "/info/description",
        "/x-portico/plugin",
        "/paths/~1a~1{x}.json",
        "/paths/b",
        "/paths/~1c/get/summary",
    ]


# --------------------------------------------------------------------------------------------
# x-portico


def test_an_unknown_x_portico_key_at_the_root_is_refused_by_name() -> None:
    document = petstore(x_portico={"plugins": {}, "upstream": {"nodes": []}})

    assert refusal(document) == [
        {
            "pointer": "/x-portico/upstream",
            "detail": "x-portico: unknown property 'upstream'; only 'plugins' is supported",
        }
    ]


def test_an_unknown_x_portico_key_on_an_operation_is_refused_by_name() -> None:
    document = petstore()
    document["paths"]["/pets"]["post"]["x-portico"] = {"plugin": {"cors": {}}}

    assert refusal(document) == [
        {
            "pointer": "/paths/~1pets/post/x-portico/plugin",
            "detail": "x-portico: unknown property 'plugin'; only 'plugins' is supported",
        }
    ]


@pytest.mark.parametrize(
    ("extension", "pointer", "detail"),
    [
        ([], "/x-portico", "x-portico: must be an object"),
        (
            {"plugins": ["key-auth"]},
            "/x-portico/plugins",
            "plugins: must be an object of plugin name to configuration",
        ),
        (
            {"plugins": {"key-auth": True}},
            "/x-portico/plugins/key-auth",
            "key-auth: plugin configuration must be an object",
        ),
        ({"plugins": {" ": {}}}, "/x-portico/plugins/ ", "plugin names must not be empty"),
    ],
)
def test_faulty_x_portico_is_refused(extension: Any, pointer: str, detail: str) -> None:
    assert refusal(petstore(x_portico=extension)) == [{"pointer": pointer, "detail": detail}]


def test_an_empty_x_portico_in_yaml_means_no_plugins() -> None:
    api = imported("openapi: 3.0.3\ninfo: {title: T}\nx-portico:\npaths:\n  /a:\n    get: {}\n")

    assert api.service_spec["plugins"] == {}
    assert api.route_spec == [{"name": "GET /a", "uri": "/a", "methods": ["GET"], "plugins": {}}]


def test_plugin_configs_are_not_validated_here() -> None:
    # The seed: each plugin config passes the runtime's own validation at deploy.
    api = imported(petstore(x_portico={"plugins": {"no-such-plugin": {"count": "many"}}}))

    assert api.service_spec["plugins"] == {"no-such-plugin": {"count": "many"}}


def test_x_portico_on_a_path_item_is_refused() -> None:
    document = minimal({"/a": {"x-portico": {"plugins": {}}, "get": {}}})

    assert refusal(document) == [
        {
            "pointer": "/paths/~1a/x-portico",
            "detail": "x-portico is read on the document root and on operations, "
            "not on a path item",
        }
    ]


# --------------------------------------------------------------------------------------------
# Parsing


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("- openapi: 3.0.0\n- info: {}\n", "an array"),
        ("just some words\n", "a string"),
        ("42\n", "a number"),
        ("", "null"),
        ("# only a comment\n", "null"),
        ("[1, 2]", "an array"),
        ('"openapi"', "a string"),
    ],
)
def test_a_document_that_is_not_a_mapping_is_refused(text: str, kind: str) -> None:
    assert refusal(text) == [
        {"pointer": "", "detail": f"the document must be a JSON object, not {kind}"}
    ]


@pytest.mark.parametrize("raw", [["openapi"], 3, None, 1.5])
def test_a_value_that_is_neither_text_nor_a_mapping_is_refused(raw: Any) -> None:
    (error,) = refusal(raw)

    assert error["pointer"] == ""
    assert error["detail"].startswith("the document must be an OpenAPI document (a JSON object)")


@pytest.mark.parametrize(
    "text",
    [
        "openapi: 3.0.0\ninfo: {title: x\npaths: {}\n",
        "openapi: 3.0.0\n  info: x\n",
        "a: 1\n---\nb: 2\n",
        "a: !Ref x\n",
        "a: 'unterminated\n",
        "a: [1, 2\nb: 3\n",
        "\t- a\n",
        "a: \x07\n",
    ],
)
def test_malformed_yaml_is_refused_with_the_line_and_column(text: str) -> None:
    (error,) = refusal(text)

    assert error["pointer"] == ""
    # the problem's wording is libyaml's (or PyYAML's without it); where is always given
    assert re.fullmatch(
        r"not valid JSON or YAML: .+ \(line \d+, column \d+\)", error["detail"], re.DOTALL
    ), error["detail"]


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        (
            '{"openapi": "3.0.0", "info": {"title": "x"}, "paths": {}',
            "not valid JSON or YAML: Expecting ',' delimiter (line 1, column 57)",
        ),
        (
            '{"openapi": "3.0.0" "info": {}}',
            "not valid JSON or YAML: Expecting ',' delimiter (line 1, column 21)",
        ),
        (
            '{\n  "openapi": "3.0.0",\n  "info": {"title": "x",},\n  "paths": {}\n  ]\n}',
            "not valid JSON or YAML: Expecting property name enclosed in double quotes "
            "(line 3, column 25)",
        ),
        ('{"openapi": NaN}', "not valid JSON or YAML: NaN is not a JSON number"),
        ('{"openapi": -Infinity}', "not valid JSON or YAML: -Infinity is not a JSON number"),
    ],
)
def test_malformed_json_is_refused_with_the_json_error(text: str, detail: str) -> None:
    assert refusal(text) == [{"pointer": "", "detail": detail}]


def test_json_with_a_trailing_comma_is_read_as_the_yaml_it_also_is() -> None:
    text = '{"openapi": "3.0.0", "info": {"title": "x",}, "paths": {},}'

    assert imported(text).name == "x"


def test_text_that_is_not_utf8_is_refused() -> None:
    assert refusal(b"openapi: \xff\n") == [
        {
            "pointer": "",
            "detail": "not valid JSON or YAML: the document is not UTF-8 text (invalid start byte)",
        }
    ]
    assert refusal("openapi: \ud800\n")[0]["detail"] == (
        "not valid JSON or YAML: the document is not valid Unicode text"
    )


def test_unsafe_yaml_tags_are_never_constructed() -> None:
    text = "openapi: !!python/object/apply:os.system ['touch /tmp/portico-pwned']\n"

    (error,) = refusal(text)

    assert error["pointer"] == ""
    assert "could not determine a constructor" in error["detail"]


@pytest.mark.parametrize(
    ("raw", "pointer", "detail"),
    [
        ("a: !!binary aGVsbG8=\n", "/a", "a bytes value cannot be stored as JSON"),
        ("a: !!set {x, y}\n", "/a", "a set value cannot be stored as JSON"),
        ("a: [1, .nan]\n", "/a/1", "nan is not a JSON number"),
        ("a: {b: -.inf}\n", "/a/b", "-inf is not a JSON number"),
        ('a: "nul\\0"\n', "/a", "text must not contain the character U+0000"),
        ('{"a": ["\\u0000"]}', "/a/0", "text must not contain the character U+0000"),
        ('{"a": "\\ud800"}', "/a", "text must not contain unpaired surrogate characters"),
        ({"a": {"b": float("nan")}}, "/a/b", "nan is not a JSON number"),
        ({"a": [{1, 2}]}, "/a/0", "a set value cannot be stored as JSON"),
        ({"a": {(1, 2): "x"}}, "/a", "a tuple cannot be an object key in JSON"),
    ],
)
def test_values_json_cannot_hold_are_refused_at_their_place(
    raw: str | dict[str, Any], pointer: str, detail: str
) -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_document(raw)

    assert caught.value.errors == [{"pointer": pointer, "detail": detail}]


def test_keys_become_json_keys_and_a_literal_backslash_u0000_is_fine() -> None:
    document = parse_document(
        {"a": {7: "seven", True: "yes", None: "nothing", 2.5: "x"}, "b": "\\u0000"}
    )

    assert document == {
        "a": {"7": "seven", "true": "yes", "null": "nothing", "2.5": "x"},
        "b": "\\u0000",
    }


def test_a_character_yaml_does_not_allow_is_named_with_its_place() -> None:
    assert refusal("openapi: 3.0.0\ntitle: é\x07\n") == [
        {
            "pointer": "",
            "detail": "not valid JSON or YAML: U+0007 is not allowed in YAML (line 2, column 9)",
        }
    ]


# ---- size and nesting limits


def test_an_oversized_document_is_refused_before_it_is_parsed() -> None:
    padding = "#" + "x" * MAX_DOCUMENT_BYTES + "\n"
    text = PETSTORE_YAML + padding

    for raw in (text, text.encode()):
        (error,) = refusal(raw)
        assert error["pointer"] == ""
        assert error["detail"].startswith("the document is larger than 5 MiB (")


def test_a_document_of_exactly_the_limit_is_accepted() -> None:
    padding = MAX_DOCUMENT_BYTES - len(PETSTORE_YAML.encode()) - 2
    text = PETSTORE_YAML + "#" + "x" * padding + "\n"
    assert len(text.encode()) == MAX_DOCUMENT_BYTES

    assert imported(text).route_spec == EXPECTED_ROUTE_SPEC


def test_an_oversized_mapping_is_refused() -> None:
    document = petstore(x_blob="x" * MAX_DOCUMENT_BYTES)

    (error,) = refusal(document)

    assert error["pointer"] == ""
    assert error["detail"].startswith("the document is larger than 5 MiB (")


def test_multibyte_text_is_measured_in_bytes() -> None:
    text = PETSTORE_YAML + "# " + "é" * (MAX_DOCUMENT_BYTES // 2) + "\n"

    assert refusal(text)[0]["detail"].startswith("the document is larger than 5 MiB (")


@pytest.mark.parametrize(
    "raw",
    [
        '{"a": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}",
        "[" * 100_000,
        "a: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        "a:\n" + "".join(" " * i + "- \n" for i in range(MAX_DEPTH + 1)),
    ],
    ids=["json", "json-unclosed", "yaml-flow", "yaml-block"],
)
def test_documents_nested_too_deeply_are_refused(raw: str) -> None:
    (error,) = refusal(raw)

    assert error["pointer"] == ""
    assert error["detail"] in (
        f"the document is nested more than {MAX_DEPTH} levels deep",
        # the unclosed one: the JSON parser gives up before YAML's nesting check is reached
        f"not valid JSON or YAML: the document is nested more than {MAX_DEPTH} levels deep",
    )


def test_a_deep_or_circular_mapping_is_refused() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(MAX_DEPTH + 5):
        node["x"] = {}
        node = node["x"]
    circular: dict[str, Any] = {"openapi": "3.0.0"}
    circular["self"] = circular

    for raw in (deep, circular):
        assert refusal(raw) == [
            {"pointer": "", "detail": f"the document is nested more than {MAX_DEPTH} levels deep"}
        ]


def test_nesting_up_to_the_limit_is_accepted() -> None:
    value: Any = "leaf"
    for _ in range(MAX_DEPTH - 1):
        value = [value]
    document = minimal({}) | {"x-deep": value}

    assert imported(json.dumps(document)).document == document
    assert imported(yaml.safe_dump(document)).document == document
    assert imported(document).document == document


# ---- YAML anchors and aliases


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            "openapi: 3.0.0\ninfo: &info {title: Pets}\nx-copy: *info\npaths: {}\n",
            "line 2, column 7",
        ),
        ("openapi: 3.0.0\ninfo: {title: &t Pets}\npaths: {}\n", "line 2, column 15"),
        ("openapi: 3.0.0\nx: *undefined\n", "line 2, column 4"),
        (
            'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
            "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
            "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
            "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
            "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
            "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
            "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
            "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
            "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n",
            "line 1, column 4",
        ),
        ("base: &base {a: 1}\nother:\n  <<: *base\n", "line 1, column 7"),
    ],
    ids=["anchor-and-alias", "anchor-only", "alias-only", "billion-laughs", "merge-key"],
)
def test_yaml_anchors_and_aliases_are_refused(text: str, where: str) -> None:
    assert refusal(text) == [
        {
            "pointer": "",
            "detail": f"YAML anchors and aliases are not supported ({where}); "
            "write the content out in full",
        }
    ]


def test_an_ampersand_or_asterisk_inside_a_string_is_not_an_anchor() -> None:
    api = imported(minimal({"/a": {"get": {"summary": "*all* & more"}}}))

    assert imported(yaml.safe_dump(api.document)).route_spec[0]["desc"] == "*all* & more"


# --------------------------------------------------------------------------------------------
# Property: only ValidationFailed, whatever comes in
#
# Three sources: random JSON values (as mappings, JSON text and bytes); random YAML-ish text
# (token soup, alone or spliced into a valid skeleton); and OpenAPI-like documents that are
# mostly right with a fault here and there, so that conversion is reached and often succeeds.

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["/pets", "/pets/{id}", "3.0.3", "x-portico", "plugins", "\x00", "\ud800"])
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=25,
)

YAML_TOKENS = [
    *("openapi: ", "3.0.3", "3.1.0", "'2.0'", "swagger: ", "info:", "title: ", "description: "),
    *("paths:", "/pets:", "/pets/{petId}:", "/a/{b}.json:", "get:", "post:", "GET:", "$ref: "),
    *("operationId: ", "summary: ", "x-portico:", "plugins:", "key-auth:", "limit-count: "),
    *("\n", "\n  ", "\n    ", "\n      ", "  ", "- ", ": ", ", ", "{", "}", "[", "]", "? "),
    *("|\n", ">-\n", "'", '"', "# ", "---\n", "...\n", "<<: ", "%YAML 1.1\n", "%TAG ! x:\n"),
    *("&a ", "*a", "!!binary ", "!!set ", "!!int ", "!!float ", "!!bool ", "!!timestamp "),
    *("!!str ", "!!omap ", "!!pairs ", "!!python/object/apply:os.system ", "!Ref ", "!<x:y> "),
    *(".nan", "-.inf", "~", "null", "yes", "0x1F", "0o17", "1_000", "1e999", "1:20", "_"),
    *("2001-13-45", "2001-12-14t21:59:43.10-05:00", "\\ud800", "\\0", "\\x", "\t"),
    *("\x00", "\x85", "\ufeff", "\u2028", "é", "s" * 257, "9" * 5000),
]
SKELETON = (
    "openapi: 3.0.3\ninfo:\n  title: Pets\n  description: {}\n"
    "x-portico:\n  plugins:\n    key-auth: {{}}\n"
    "paths:\n  /pets/{{petId}}:\n    get:\n      operationId: {}\n      summary: {}\n"
    "      x-portico:\n        plugins:\n          {}\n"
    "    {}:\n      description: x\n"
)
token_soup = st.lists(
    st.sampled_from(YAML_TOKENS) | st.text(st.characters(max_codepoint=0x2FF), max_size=4),
    max_size=30,
).map("".join)
yaml_ish_text = token_soup | st.builds(
    SKELETON.format,
    token_soup,
    token_soup | st.just("showPet"),
    token_soup,
    token_soup | st.just("limit-count: {count: 1}"),
    st.sampled_from(["post", "GET", "$ref", "x-portico", "parameters"]) | token_soup,
)


def import_or_refuse(raw: Any) -> ImportedApi | None:
    """Import ``raw``; a refusal must be a well-formed ValidationFailed (→ ``None``)."""
    try:
        api = convert(parse_document(raw))
    except ValidationFailed as error:
        check_refusal(error)
        return None
    event("imported")
    check_imported(api)
    return api


def check_refusal(error: ValidationFailed) -> None:
    event(f"refused: {error.errors[0]['detail'][:30]}")
    assert error.status == 400
    assert error.detail == error.errors[0]["detail"]
    for item in error.errors:
        assert set(item) == {"pointer", "detail"}
        assert item["pointer"] == "" or item["pointer"].startswith("/")
        assert item["detail"]


def check_imported(api: ImportedApi) -> None:
    assert 0 < len(api.name) <= 100 and api.name == api.name.strip()
    assert len(api.desc) <= 256
    assert api.service_spec == {
        "name": api.name,
        "desc": api.desc,
        "plugins": api.service_spec["plugins"],
    }
    assert all(isinstance(config, dict) for config in api.service_spec["plugins"].values())
    json.dumps(api.document, allow_nan=False).encode()  # storable as JSON
    for route in api.route_spec:
        assert set(route) <= {"name", "desc", "uri", "methods", "plugins"}
        assert isinstance(route["plugins"], dict)
        assert route["uri"].startswith("/")
        assert "{" not in route["uri"] and "}" not in route["uri"]
        assert len(route["methods"]) == 1 and route["methods"][0].isupper()
        assert 0 < len(route.get("desc", "x")) <= 256


FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@FUZZ
@given(value=json_values)
def test_property_random_json_values_only_ever_raise_validation_failed(value: Any) -> None:
    import_or_refuse(value)
    text = json.dumps(value)
    import_or_refuse(text)
    import_or_refuse(text.encode("utf-8", "surrogatepass"))


@FUZZ
@given(text=yaml_ish_text)
def test_property_random_yaml_ish_text_only_ever_raises_validation_failed(text: str) -> None:
    import_or_refuse(text)
    import_or_refuse(text.encode("utf-8", "surrogatepass"))


short_texts = st.text(st.characters(max_codepoint=0x2FF), max_size=12)
descriptions = st.one_of(
    *[short_texts] * 4,
    st.none(),
    st.sampled_from(["s" * 256, "s" * 257, "  padded  ", ""]),
    json_scalars,
)
plugin_maps = st.dictionaries(
    st.sampled_from(["key-auth", "limit-count", "cors", "proxy-rewrite", "", " "]),
    st.one_of(
        st.dictionaries(st.text(max_size=3), json_values, max_size=2),
        st.dictionaries(st.text(max_size=3), json_values, max_size=2),
        st.none(),
        json_scalars,
    ),
    max_size=3,
)
extensions = st.one_of(
    st.fixed_dictionaries({"plugins": plugin_maps}),
    st.fixed_dictionaries({"plugins": plugin_maps}),
    st.fixed_dictionaries({}, optional={"plugins": json_values, "upstream": json_values}),
    json_scalars,
)
operation_dicts = st.fixed_dictionaries(
    {},
    optional={
        "operationId": st.sampled_from(["listPets", "showPet", "createPet", "deletePet", " "])
        | st.none(),
        "summary": descriptions,
        "description": descriptions,
        "x-portico": extensions,
        "responses": json_values,
    },
)
METHOD_KEYS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
path_item_dicts = st.dictionaries(
    st.one_of(
        *[st.sampled_from(METHOD_KEYS)] * 4,
        st.sampled_from(["parameters", "summary", "servers", "x-extra"]),
        st.sampled_from(["GET", "x-portico", "$ref", "query"]),
    ),
    st.one_of(*[operation_dicts] * 4, json_values),
    max_size=4,
)
path_keys = st.one_of(
    *[st.sampled_from(["/", "/pets", "/pets/{petId}", "/stores/{id}/pets/{petId}", "/~a/b"])] * 4,
    st.sampled_from(["/a/{b}.json", "/a/{x}/b/{x}", "/a/:b", "/a/*", "/{}", "pets", ""]),
    st.text(max_size=6),
)
paths_objects = st.dictionaries(
    path_keys, st.one_of(*[path_item_dicts] * 4, json_values), max_size=4
)
infos = st.fixed_dictionaries(
    {"title": st.one_of(*[st.sampled_from(["Pets", "  Pets  "])] * 3, descriptions)},
    optional={"description": descriptions, "version": json_scalars},
)


@st.composite
def openapi_like(draw: st.DrawFn) -> dict[str, Any]:
    document: dict[str, Any] = {
        "openapi": draw(st.sampled_from(["3.0.3", "3.1.0"])),
        "info": draw(infos),
        "paths": draw(paths_objects),
    }
    if draw(st.booleans()):
        document["x-portico"] = draw(extensions)
    fault = draw(st.sampled_from(["none"] * 4 + ["openapi", "drop", "swagger", "replace"]))
    if fault == "openapi":
        document["openapi"] = draw(st.sampled_from(["3.2.0", "2.0", "3.0", 3.1]) | json_scalars)
    elif fault == "drop":
        del document[draw(st.sampled_from(sorted(document)))]
    elif fault == "swagger":
        del document["openapi"]
        document["swagger"] = draw(st.sampled_from(["2.0", 2.0]) | json_values)
    elif fault == "replace":
        document[draw(st.sampled_from(["info", "paths", "x-portico"]))] = draw(json_values)
    return document


@FUZZ
@given(document=openapi_like())
def test_property_openapi_like_documents_convert_or_are_refused(document: dict[str, Any]) -> None:
    api = import_or_refuse(document)
    if api is not None:
        assert api.document == document
        operations = [
            (path, key)
            for path, item in document["paths"].items()
            for key in item
            if key in METHOD_KEYS
        ]
        assert [route["methods"][0].lower() for route in api.route_spec] == [
            key for _, key in operations
        ]
    for text in (json.dumps(document), yaml.safe_dump(document)):
        again = import_or_refuse(text)
        assert (again is None) == (api is None) or "\x00" in text or "nan" in text.lower()
