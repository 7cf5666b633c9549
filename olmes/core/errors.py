"""The one exception type users see: a one-line message that says what went wrong and what to do."""


class OlmesError(Exception):
    """A user-facing error. The CLI prints its message on one line and exits with status 2."""
