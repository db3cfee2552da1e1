"""Revisions of an API: immutable once deployed; specs and upstream bindings."""
