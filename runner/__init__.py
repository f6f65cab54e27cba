"""Jobs, adapters, metrics, and the ``fbench`` CLI."""

__version__ = "0.1.0"
