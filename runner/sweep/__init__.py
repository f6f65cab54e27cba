"""Expanding a sweep into jobs, resuming it, and running it on an executor."""
