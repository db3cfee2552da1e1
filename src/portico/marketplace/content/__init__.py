"""Content and moderation (``/content``): the nodes of each bundle, the editorial workflow of
APIs and products (``node/moderation.py``), publishing and unpublishing pages, and pages
themselves (Portico's addition: the seed has no endpoint that writes one)."""
