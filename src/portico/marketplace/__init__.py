"""Surface B: the marketplace admin API (``/api/admin/v1``), one package per domain."""

#: the surface its audit entries carry (declared here, above every module of the marketplace:
#: ``access`` and ``auth`` both write them, and ``access`` imports ``auth``)
SURFACE = "marketplace"
