"""Portal features: a registry synced from the installed modules (``modules.py``: each
module is one feature), the platform state of each (on or off, and its settings) and
per-organisation overrides. The effective state is the override when one is set, else the
platform's; a feature that is off answers ``/problems/feature-disabled`` on every route of
its module (``gate.py``)."""
