"""User-facing errors: one line, naming the field and what is allowed."""


class ConfigError(ValueError):
    """A user input is invalid. ``str(err)`` is one line: ``<field>: <problem>; <allowed>``."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")
