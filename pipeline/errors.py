"""The one exception type for bad input; the CLI prints it as a one-line error."""


class BaccaratError(Exception):
    """Bad input (config, arguments, files): the message is shown to the user as it is."""
