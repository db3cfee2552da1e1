"""role domain."""
