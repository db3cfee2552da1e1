"""Source types: the connectors the marketplace offers (``connectors/registry.py``), with
their capabilities, connection fields and feature flag (permission ``administer gateway
sync``)."""
