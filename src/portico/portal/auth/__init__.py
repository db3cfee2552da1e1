"""Sign-in on the portal: the admin API's token exchange, served under ``/api/portal/v1``."""
