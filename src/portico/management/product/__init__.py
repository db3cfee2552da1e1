"""Products: bundles of APIs with a quota, deployed per environment."""
