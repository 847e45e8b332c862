"""User-facing errors: one line, naming the field and what is allowed."""


class ConfigError(ValueError):
    """A user input is invalid: one line naming the field and what is allowed.

    Parameters
    ----------
    field : str
        The config field, spec key or command-line option at fault.
    message : str
        What is wrong and what is allowed.

    Attributes
    ----------
    field, message : str
        As given; ``str(err)`` is ``"<field>: <message>"``. The command line prints it and exits
        with status 2.
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")
