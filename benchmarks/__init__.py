"""fbench's benchmark suite: ``python -m benchmarks`` (``make bench``) runs every part
and writes ``benchmarks/results.json``; each part also runs alone (``python -m
benchmarks.<part>``)."""
