"""The `fairviz` command line: one module per subcommand, dispatched by `fairviz.cli.main`."""
