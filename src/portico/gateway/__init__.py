"""The gateway runtime (data plane). It imports neither FastAPI nor SQLAlchemy."""

from portico import native

# the compiled build first, when current: see CONVENTIONS.md "Compiled modules"
__path__ = native.package_path(__name__, __path__)
