"""Surface B: the marketplace admin API (``/api/admin/v1``), one package per domain."""
