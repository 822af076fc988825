"""Case sources for suites written elsewhere: `--cases KIND:LOCATION`.

Each module here turns one foreign suite into cases, by the suite's own
rules, and names what it cannot import and why. `KINDS` maps the spelling
on the command line to the module; the module's `sources(location, spec)`
returns its CaseSources.
"""

KINDS = {
    "torch-mlir-e2e": "conformance.cases.sources.torch_mlir_e2e",  # a torch-mlir checkout's e2e registry
}
