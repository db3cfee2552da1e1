"""service_account domain: machine identities of an organisation (integrations, CI)."""
