"""Compile here, run there: a COMPILED pair's bundle as a machine with IREE's runtime alone runs it.

A pair compiled for a device this machine lacks (a GPU), or stopped by
--compile-only, ends COMPILED; with --artifacts DIR its bundle holds all
that running it elsewhere needs (layout.py), and DIR/run-compiled.sh runs
every such pair there with iree-run-module and a POSIX shell, no Python.
`conformance verdicts-from DIR`, back here, judges what they wrote
(execution/remote_verdicts.py) and `conformance merge` puts the verdicts in
place of COMPILED. docs/remote-run.md tells the whole round trip.

    layout.py   the bundle's file names, remote.json and structure.pkl
    scripts.py  the shell scripts: one per pair, one for the whole directory
    bundle.py   a COMPILED pair's staging folder turned into its bundle
"""
