"""API governance: each published API's OpenAPI document linted (validity and the built-in
rules of ``rules.py``), scored per category, every run kept (``/governance``)."""
