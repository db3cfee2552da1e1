"""What a developer does with its own account on the portal: who am I (``GET /me``), my
notifications, accepting an organisation's invitation. Reached by the portal through
``marketplace.public``."""
