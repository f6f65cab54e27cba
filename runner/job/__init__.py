"""Step 2: running one job: feed a workload's stream through a memory, score each
query against ground truth, checkpoint rows; the harness-side extractors."""
