"""A developer's apps on the portal: ``/apps`` and ``/apps/{app}`` (the key shown once),
its key's rotation and its usage."""
