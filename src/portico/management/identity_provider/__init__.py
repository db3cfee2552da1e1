"""identity provider domain."""
