"""The gateway runtime (data plane). It imports neither FastAPI nor SQLAlchemy."""
