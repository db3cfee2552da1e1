"""Test support: real throwaway PostgreSQL and Redis servers for the test suite."""
