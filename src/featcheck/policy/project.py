"""The rules a project knows, for `featcheck rules PATH` and `featcheck rule CODE PATH`."""

from __future__ import annotations

from pathlib import Path

from featcheck.boundary import checkout_root
from featcheck.noexec.workspace import discover_workspace
from featcheck.policy.load import load_config
from featcheck.policy.settings import CONFIG_FILE
from featcheck.rules import Catalogue


def project_catalogue(path: Path) -> Catalogue:
    """The rules of the project at `path` (a directory or manifest, or any directory inside
    the project): the built-in ones plus its `[[rule]]` entries (`featcheck rules PATH`).

    The workspace root is found as cargo finds it, from the nearest Cargo.toml upwards; a
    directory with only a featcheck.toml counts as a root too.
    """
    path = path.absolute()
    directory = path if path.is_dir() else path.parent
    for candidate in (directory, *directory.parents):
        if (candidate / "Cargo.toml").is_file():
            layout = discover_workspace(candidate / "Cargo.toml")
            return load_config(layout.root, {}, checkout=layout.checkout).catalogue
        if (candidate / CONFIG_FILE).is_file():
            return load_config(candidate, {}, checkout=checkout_root(candidate)).catalogue
    return Catalogue.builtin()
