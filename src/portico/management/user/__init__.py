"""user domain."""
