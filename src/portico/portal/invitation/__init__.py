"""Accepting an organisation's invitation: ``POST /invitations/accept``."""
