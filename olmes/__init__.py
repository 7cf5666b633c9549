"""olmes: a reproducible implementation of the OLMES evaluation standard (Gu et al., 2024)."""

__version__ = "0.1.0"
