"""Gateway connections: a source type (connector) with the configuration that reaches one
remote side, saved only once the connector's check passed. Secrets are write-only and
sealed at rest (``core/sealing.py``). Permission ``administer gateway sync``."""
