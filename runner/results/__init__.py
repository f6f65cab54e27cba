"""Step 3: results on disk: the shard schema, atomic writes, the folder layout, the one
shard validator, compaction and aggregation. Never imports the memory stack."""
