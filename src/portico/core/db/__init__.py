"""Database access: engine and session factory, declarative base, column types, repositories."""
