"""consumer domain."""
