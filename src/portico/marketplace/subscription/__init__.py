"""Subscriptions: a developer app's access to an API or a product of the catalogue, asked
for on the portal, decided by administrators, and provisioned on the gateway connection the
node came from, durably (retried until the remote side has done it)."""
