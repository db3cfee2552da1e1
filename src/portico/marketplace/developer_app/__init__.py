"""Developers' apps of the portal: a portal account's app, its ``key-auth`` key sealed at
rest and shown once, and what was made for it on each gateway connection."""
