"""The nightly matrix: which pairs run (and in which shard), where they run (executors/), the results store, progress."""
