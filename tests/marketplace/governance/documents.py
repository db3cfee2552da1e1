"""Documents whose linting results the tests know by heart (worked out by hand from the
rules, then checked against the linter)."""

from __future__ import annotations

from typing import Any

#: no rule finds anything in it: 100 everywhere
CLEAN: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {
        "title": "Pets",
        "version": "1.0.0",
        "description": "The pets of the shop.",
        "contact": {"email": "api@example.com"},
    },
    "servers": [{"url": "https://pets.example.com/v1"}],
    "security": [{"bearer": []}],
    "components": {
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        "schemas": {
            "Pet": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "maxLength": 64},
                    "tags": {
                        "type": "array",
                        "maxItems": 10,
                        "items": {"type": "string", "maxLength": 20},
                    },
                },
                "example": {"name": "Rex", "tags": []},
            }
        },
    },
    "paths": {
        "/pets/{petId}": {
            "get": {
                "operationId": "getPet",
                "summary": "One pet",
                "tags": ["pets"],
                "parameters": [
                    {
                        "name": "petId",
                        "in": "path",
                        "required": True,
                        "description": "The pet's id.",
                        "schema": {"type": "string", "format": "uuid"},
                    }
                ],
                "responses": {
                    "200": {
                        "description": "The pet.",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}
                        },
                    },
                    "401": {"description": "No credentials."},
                    "403": {"description": "Not allowed."},
                    "404": {"description": "No such pet."},
                    "429": {"description": "Too many requests."},
                },
            }
        }
    },
}

#: a little of everything wrong
MIXED: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Legacy", "version": "1"},
    "servers": [{"url": "http://legacy.example.com"}],
    "components": {
        "securitySchemes": {"key": {"type": "apiKey", "in": "query", "name": "api_key"}},
    },
    "paths": {
        "/Users/": {
            "get": {
                "operationId": "list_users",
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {
                                "schema": {"type": "array", "items": {"type": "string"}}
                            }
                        },
                    }
                },
            },
            "post": {
                "operationId": "list_users",
                "summary": "Create a user",
                "tags": ["users"],
                "security": [{"key": []}],
                "responses": {
                    "201": {"description": "created"},
                    "400": {"description": "refused"},
                },
            },
        }
    },
}

#: what MIXED yields, rule by rule (JSON pointers into MIXED)
MIXED_FINDINGS: set[tuple[str, str]] = {
    # security: E 3, W 5, I 1 → round(100 e^-0.57) = 57
    ("security-declared", "/paths/~1Users~1/get"),
    ("security-no-query-keys", "/components/securitySchemes/key"),
    ("security-https-servers", "/servers/0/url"),
    ("security-401-documented", "/paths/~1Users~1/post/responses"),
    ("security-403-documented", "/paths/~1Users~1/post/responses"),
    ("security-429-documented", "/paths/~1Users~1/get/responses"),
    ("security-429-documented", "/paths/~1Users~1/post/responses"),
    (
        "security-string-bounds",
        "/paths/~1Users~1/get/responses/200/content/application~1json/schema/items",
    ),
    (
        "security-array-bounds",
        "/paths/~1Users~1/get/responses/200/content/application~1json/schema",
    ),
    # style: E 1, W 2, I 3 → round(100 e^-0.26) = 77
    ("style-operation-id-unique", "/paths/~1Users~1/post/operationId"),
    ("style-operation-id-case", "/paths/~1Users~1/get/operationId"),
    ("style-operation-id-case", "/paths/~1Users~1/post/operationId"),
    ("style-path-case", "/paths/~1Users~1"),
    ("style-path-trailing-slash", "/paths/~1Users~1"),
    ("style-operation-tags", "/paths/~1Users~1/get"),
    # documentation: E 1 (the validator: operationIds must be unique), W 3, I 2
    # → round(100 e^-0.29) = 75
    ("doc-valid", ""),
    ("doc-info-description", "/info"),
    ("doc-info-contact", "/info"),
    ("doc-operation-description", "/paths/~1Users~1/get"),
    ("doc-examples", "/paths/~1Users~1/get/responses/200"),
    ("doc-error-responses", "/paths/~1Users~1/get/responses"),
}
MIXED_SCORES = {"security": 57, "style": 77, "documentation": 75, "overall": 70}
