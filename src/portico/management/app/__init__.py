"""Apps: a developer's credential set in one environment, subscribed to products."""
