"""Plugin schemas and global (environment-wide) plugins."""
