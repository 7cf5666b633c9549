"""The ``olmes`` command line: ``main`` dispatches to one module per command in ``commands/``."""
