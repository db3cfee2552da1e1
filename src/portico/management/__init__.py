"""Management service (surface A): one package per domain (environments, upstreams, APIs and
revisions, plugins, deployments, consumers, developers, apps, products, analytics, widgets,
users, roles, groups, identity providers, service accounts ...), each with its endpoints,
service, repository and schemas; ``routes`` mounts them (see docs/architecture.md)."""
