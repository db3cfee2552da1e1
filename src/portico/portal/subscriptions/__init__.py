"""An app's subscriptions on the portal: ``/apps/{app}/subscriptions``."""
