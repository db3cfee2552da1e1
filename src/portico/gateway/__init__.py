"""The gateway runtime (data plane). It imports neither FastAPI nor SQLAlchemy."""

from portico import native

# the compiled build of the hot modules, when there is a current one (portico/native.py)
__path__ = native.package_path(__name__, __path__)
