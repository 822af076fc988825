"""The nightly matrix: which pairs run (and in which shard), where they run (executors/), progress, its own options and --resume."""
