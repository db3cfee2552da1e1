"""audit log domain."""
