"""Management service (surface A): environments, upstreams, APIs, revisions."""
