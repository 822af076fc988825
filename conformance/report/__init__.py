"""Reports: end-of-run tables, root-cause groups, nightly JSON/Markdown/HTML."""
