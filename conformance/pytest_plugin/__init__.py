"""The pytest plugin (entry point `pytest11: conformance`)."""
