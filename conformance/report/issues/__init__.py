"""Issue files: one root-cause group as Markdown ready to paste into the tracker of the tool that failed.

    evidence.py   what a results directory holds for a group: its smallest failing case (the
                  reduced one when `conformance reduce` wrote it there), that case's bundle (the
                  IR handed to the tool, the public-tool commands, what the tool printed)
    commands.py   the bundle's commands as a reader runs them: inputs small enough written inline
    replay.py     running those commands now, in an empty folder, with only the public tools on PATH
    portable.py   text with nothing of this machine in it (paths, home, host and user names)
    trackers.py   which upstream tracker a tool's failure goes to
    markdown.py   the file itself

`conformance issue GROUP --results DIR` (cli/issue.py) writes it; docs/filing-issues.md says how.
"""
