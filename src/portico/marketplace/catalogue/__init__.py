"""The API and product catalogue of the admin API (``/apis``, ``/products``): catalogue nodes of
the ``apis`` and ``api_products`` bundles, written in the portal or bound to a gateway
connection, listed with filters and sorts, edited and deleted by the transition table's
rules (``node/hooks.py``)."""
