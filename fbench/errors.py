"""The user-facing error: bad input or configuration, explained in one line (the
problem and the fix). The CLI prints its message and exits 2."""


class FbenchError(Exception):
    """Bad input or configuration, explained in one line (names the problem and the fix)."""
