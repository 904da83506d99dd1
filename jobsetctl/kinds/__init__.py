"""Object kinds: the handler interface, the registry, and an in-memory cluster view."""
