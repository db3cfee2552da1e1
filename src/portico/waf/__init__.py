"""Portico's WAF engine: ModSecurity v3 with the OWASP Core Rule Set behind ``POST /inspect``.

``portico waf-engine`` runs it; the gateway's ``waf`` plugin asks it for a verdict on each
request. It imports nothing of Portico's parts: it is a process of its own.
"""
