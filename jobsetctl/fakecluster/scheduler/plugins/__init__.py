"""Scheduling plugins, one module per plugin (or per upstream plugin family)."""
