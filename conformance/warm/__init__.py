"""Verdicts answered from the cache: a run of unchanged cases costs one process start.

A pair's raw result (before it is judged against an xfail set) is a
function of what went into it: the case's code and data, the backend's
code, conformance's own code, every tool's version and the settings that
shape results. The compile cache (execution/compile_cache_*.py) keys each
stage by part of that and still runs every case's test function and eager
to find its key; this store keys the whole result by all of it, read from
the files themselves, so a run that changed nothing answers without
importing torch, loading a case or starting a child (as Bazel answers an
unchanged test from its action cache).

    fingerprint.py  what a result depends on, as digests of files and versions, read without importing torch
    store.py        selections (which cases a command line chose, from which files) and results, on disk

A result is stored only when its verdict cannot depend on the machine or
the moment (store.storable): a pass, a skip or a failure; a hang or a crash
only when what ended it says nothing of the machine (a flood of output, a
signal such as SIGSEGV), not a budget, the memory watchdog or a SIGKILL;
never a FLAKY, an UNKNOWN or a missing tool.
Any change to a case file, a backend file, conformance's code or a version
misses, and the pairs run as before.
"""
