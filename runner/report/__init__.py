"""Rendering results: the Markdown report and its plots."""
