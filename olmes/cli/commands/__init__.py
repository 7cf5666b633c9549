"""Subcommands of the ``olmes`` CLI, one module each (discovered by ``olmes.cli.main``)."""
