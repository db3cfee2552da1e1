"""The developer portal's public API under ``/api/portal/v1`` (grows with the portal)."""
