"""Which route a request is for: the router (``router``), the path rules routes are matched
on (``paths``), and who the client is behind trusted proxies (``client_address``)."""

from portico import native

# the compiled build first, when current: see CONVENTIONS.md "Compiled modules"
__path__ = native.package_path(__name__, __path__)
