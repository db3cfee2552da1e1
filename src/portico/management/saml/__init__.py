"""SAML 2.0 sign-in through an organisation's identity-provider configurations."""
