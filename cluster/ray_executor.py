"""STUB: replaced by the Ray executor."""
