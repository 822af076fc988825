"""The `conformance` command: one module per subcommand (see main.COMMANDS)."""
