"""Names shared by the side that runs jobs and the side that reads their results."""

OWN = "own"  # a memory's embedder when it ranks by its own means (no shared embedder)
