"""The developer portal's public API under ``/api/portal/v1`` (grows with the portal).

It reaches the marketplace only through ``portico.marketplace.public``, its contract."""
