"""An outside fbench plugin: a memory (``recency``) and a workload (``example.moves``)."""
