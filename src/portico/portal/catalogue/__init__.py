"""The catalogue as the caller may see it: ``/apis`` and ``/products``."""
