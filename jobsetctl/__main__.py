"""``python -m jobsetctl``."""

from __future__ import annotations

from jobsetctl.cli import main

if __name__ == "__main__":
    main()
