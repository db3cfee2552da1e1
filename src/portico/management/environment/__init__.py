"""environment domain."""
