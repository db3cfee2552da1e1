"""Gateway plugins: one module per plugin, or one package for a plugin of several modules
(see ``base`` for the contract), and the registry.

The hottest plugins (key-auth, limit-count, product-quota) are packages: their per-request work
is in a ``runtime`` module compiled with the data plane (``portico.native``), their pydantic
models in ``config``, and the package's ``__init__`` exports ``PLUGIN``.
"""
