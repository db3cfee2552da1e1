"""Connectors: what the marketplace knows how to read APIs from (a source type).

Each connector is a module of its own exporting ``CONNECTOR`` (a :class:`base.Connector`):
its id, label, capability map, the fields of a connection to it and the check that a
connection's configuration reaches it. ``registry`` lists them. Every URL a connector calls
comes from a user, so every call goes through the SSRF guard (``base.Outbound``).
"""
