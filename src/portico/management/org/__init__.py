"""org domain."""
