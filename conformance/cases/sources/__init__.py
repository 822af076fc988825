"""Case sources for suites written elsewhere.

Each module here turns one foreign suite into cases, by the suite's own
rules, and names what it cannot import and why. Two ways in:

- `--cases KIND:LOCATION`, for a suite that lives in a checkout of its own:
  registry.SOURCE_KINDS maps the spelling on the command line to the
  module, whose `sources(location, spec)` returns its CaseSources;
- a built-in suite (registry.BUILTIN_SUITES: ONNX's node tests, built from
  the installed onnx package), added with `--suite NAME`.

The registry names them, and loads them by name: they import the registry.
"""
