"""Upstreams: the backends an environment routes to, and their specification."""
