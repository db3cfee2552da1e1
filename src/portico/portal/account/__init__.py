"""The signed-in developer's own account: ``GET /me`` and ``GET /notifications``."""
