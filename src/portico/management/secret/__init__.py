"""secret domain: the organisation's secret store. Values plugins name by reference
(``$secret://NAME``, edge-auth's ``signing_secret``), kept encrypted (``core.sealing``, a key
of their own), never returned; resolved when a revision is deployed."""
