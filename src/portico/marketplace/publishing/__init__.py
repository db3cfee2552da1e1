"""Publishing (``/publishing``): the editorial transition, the visibility and the
cross-organisation syndication of many APIs and products at once, each item reported on its
own, and the portals syndication can target."""
