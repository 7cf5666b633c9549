"""AI2's OLMES implementation (oe-eval): its run folders imported into olmes, ours exported to its layout."""

FORMATS = {"oe-eval": "AI2's olmes command"}  # what olmes import reads and olmes export writes


def format_help(whose: str) -> str:
    """The help line of the format argument of ``olmes import`` and ``olmes export``."""
    return f"{whose}: " + ", ".join(f"{name} ({what})" for name, what in FORMATS.items())
