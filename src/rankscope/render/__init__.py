"""Turning results into text people and programs read (tables, JSON, CSV, HTML)."""
