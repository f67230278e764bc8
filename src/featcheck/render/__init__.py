"""Renderers: each turns an AuditResult into text for one audience, and never sees CLI flags.

The command line takes its `--format` choices, its help and its renderer from `FORMATS`. A
format's module is named here, not imported: a run loads only the formats it prints, and the
command line loads the chosen one while cargo works (cli/lazy.py). Every format's renderer
follows one protocol (`common.Renderer`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from featcheck.render.common import Renderer, RenderOptions


class Format(NamedTuple):
    module: str
    """The module whose `renderer(options)` makes this format's `Renderer`."""
    summary: str
    """What the format is for, in `featcheck --help` ("" when its name says it)."""
    inert: bool
    """Whether the output is inert in a CI log as it is (else the command line fences it)."""


FORMATS: dict[str, Format] = {
    "text": Format("featcheck.render.text_report", "default", inert=False),
    "json": Format("featcheck.render.json_report", "", inert=True),
    "github": Format(
        "featcheck.render.github",
        "annotations and job summary; the default when GITHUB_ACTIONS=true",
        inert=True,
    ),
    "sarif": Format("featcheck.render.sarif", "code scanning", inert=True),
}
"""Every format, in the order `--help` lists them."""


def formats_help() -> str:
    """`text (default), json, github (annotations ...), sarif (code scanning)`."""
    return ", ".join(
        f"{name} ({entry.summary})" if entry.summary else name for name, entry in FORMATS.items()
    )


def renderer(name: str, options: RenderOptions) -> Renderer:
    make: Callable[[RenderOptions], Renderer] = preload(name).renderer
    return make(options)


def preload(name: str) -> ModuleType:
    """Import the module of the format `name` now, before its renderer is asked for."""
    return importlib.import_module(FORMATS[name].module)
