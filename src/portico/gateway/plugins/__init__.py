"""Gateway plugins: one module per plugin (see ``base`` for the contract) and the registry."""
