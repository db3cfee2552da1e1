"""Catalogue nodes: APIs (bundle ``apis``), API products (``api_products``) and documentation
pages (``page``), the editorial workflow they move through and who may see them. The
catalogue, content, publishing and import endpoints all work on these rows."""
