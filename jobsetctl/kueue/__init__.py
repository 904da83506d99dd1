"""Kueue (``kueue.x-k8s.io``): its API objects, its job integrations and, in :mod:`.engine`, its
controllers and scheduler running on the fake cluster's virtual clock (scheduling.md §2)."""
