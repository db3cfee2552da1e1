"""Deployments: validation, conflict checks, environment config snapshots."""
