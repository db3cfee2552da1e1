"""Developers: people outside the organisation who own apps."""
