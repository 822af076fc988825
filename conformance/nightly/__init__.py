"""The nightly matrix: which pairs run, parallel lanes, the results store, progress."""
