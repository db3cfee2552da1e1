"""Gateway imports: what a connection's remote side exposes (its inventory, cached five
minutes), and the import of its APIs and products as catalogue nodes, one at a time, all at
once, or in a background job (``import-apis``). Imports are idempotent: a remote API or
product is one node per connection, updated in place when imported again. Permission
``administer gateway sync`` (reading what was imported: ``access content``)."""
