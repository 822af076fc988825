"""Straight-line tensor programs: what `conformance fuzz` generates and `conformance reduce` shrinks.

    program.py   the form: inputs, calls, outputs; written as a one-file case in the project's format
    slots.py     cases whose program is read when they run, so one warm child runs program after program
    runner.py    programs through the Engine (supervised child, classification), many per job
    verdict.py   "fails the same way": the same stage, code and op

A program is plain data; its case file is the only code: the parent checks
a program by building the case that file declares (conformance.cases), and
the child runs that same file, so what was checked, what ran and what is
written for a human are one text.
"""
