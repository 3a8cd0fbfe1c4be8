"""Core engine tests: independent reference, properties, invariants, other tools."""
