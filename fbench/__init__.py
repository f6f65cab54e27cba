"""fbench's leaf package: the generic registry and the user-facing error, imported by
every other package (it imports none of them)."""
