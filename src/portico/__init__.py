"""Portico: an API gateway platform."""

__version__ = "0.1.0"
