"""Executing many jobs: inline, local Ray, remote Ray cluster. The only package that
imports ``ray``, and only lazily, inside the functions that need it."""
