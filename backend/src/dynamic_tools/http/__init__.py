"""Outbound HTTP: building requests from tool configs, the SSRF guard, sending."""
