"""API health: each API's health URL checked through the SSRF guard, on a schedule and on
demand, each check kept (``/health``)."""
