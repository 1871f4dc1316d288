"""Connectors to external systems (see the sink catalogue issue for what is coming)."""
