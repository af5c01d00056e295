"""Folders of the user's own that the pipeline keeps files in: a variable of ours names one, else the
XDG base directory the user sets, else its default under the home folder, with baccarat's part under it."""

import os
from pathlib import Path


def user_folder(ours: str, xdg: str, default: str, *under: str) -> Path:
    """The folder named by the environment variable `ours`, else by `xdg` (unset: `default` under the
    home folder), then `under` it."""
    if folder := os.environ.get(ours):
        return Path(folder).expanduser().absolute()
    return Path(os.environ.get(xdg) or Path.home() / default, "baccarat", *under)
