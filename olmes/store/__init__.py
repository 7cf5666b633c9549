"""Stage 6, the results store: ``publish`` (and every check it makes) and ``reproduce``."""
