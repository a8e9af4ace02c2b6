"""Alerts: rules and incidents (alertcore), channels, the journal and delivery (alertsend)."""
