"""Importing an API from an OpenAPI document: it creates the API and its revision 1, so it
sits above both domains (the document is read and converted by ``core.openapi_document`` and
``api.openapi_import``)."""
