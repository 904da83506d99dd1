"""Kubernetes core behaviour: field errors, names, quantities, versions, gates, built-in kinds."""
