"""group domain."""
