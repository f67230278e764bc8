"""The command line: builds options from flags, runs the audit, renders, and sets the exit code.

Exit codes: 0 no finding at or above the failing level, 1 findings, 2 usage, input or cargo error.
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from featcheck import __version__
from featcheck.errors import FeatcheckError

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
_GROUP_FLAGS = ("--help", "-h", "--version")


class _DefaultToCheck(TyperGroup):
    """`featcheck PATH` means `featcheck check PATH`: the audit is the default command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in _GROUP_FLAGS):
            args = ["check", *args]
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=_DefaultToCheck,
    add_completion=False,
    no_args_is_help=False,
    rich_markup_mode=None,
    help="Audit the resolved Cargo feature set of a Rust project for silent performance losses.",
)


class OutputFormat(str, Enum):
    text = "text"
    json = "json"


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"
    never = "never"


def _version(value: bool) -> None:
    if value:
        print(f"featcheck {__version__}")
        raise typer.Exit(EXIT_CLEAN)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Audit the resolved Cargo feature set of a Rust project for silent performance losses."""


@app.command(
    epilog=(
        "Examples:  featcheck .   |   featcheck crates/app -p app --target "
        "aarch64-apple-darwin   |   cargo tree -e normal -f '{p} [{f}]' -i burn-flex | "
        "featcheck --tree -"
    )
)
def check(
    path: Annotated[
        Path, typer.Argument(help="A directory with a Cargo.toml, or the Cargo.toml itself.")
    ] = Path("."),
    package: Annotated[
        list[str] | None,
        typer.Option("--package", "-p", help="Audit only this workspace member (repeatable)."),
    ] = None,
    target: Annotated[
        list[str] | None,
        typer.Option("--target", help="Audit for this target triple (repeatable; default: host)."),
    ] = None,
    tree: Annotated[
        str | None,
        typer.Option(
            "--tree",
            metavar="FILE",
            help="Audit text saved from `cargo tree -f '{p} [{f}]'` instead (- for stdin).",
        ),
    ] = None,
    output_format: Annotated[
        OutputFormat, typer.Option("--format", help="Output format.")
    ] = OutputFormat.text,
    fail_on: Annotated[
        FailOn, typer.Option("--fail-on", help="Lowest severity that makes the exit code 1.")
    ] = FailOn.warning,
    offline: Annotated[bool, typer.Option("--offline", help="Pass --offline to cargo.")] = False,
    locked: Annotated[
        bool, typer.Option("--locked", help="Pass --locked to cargo (fail if Cargo.lock is stale).")
    ] = False,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for each cargo call.")
    ] = 300.0,
) -> None:
    """Audit a project (or saved cargo tree text) and report what costs performance.

    Resolves features per workspace member and per target exactly as `cargo build -p MEMBER`
    does (`cargo tree -e normal -p MEMBER --target T`), then applies the rules.
    """
    from featcheck.audit import AuditOptions, audit_project, audit_tree_text
    from featcheck.findings import Severity

    try:
        if tree is not None:
            text = _read_tree_input(tree)
            result = audit_tree_text(text, "<stdin>" if tree == "-" else tree)
        else:
            options = AuditOptions(
                packages=tuple(package or ()),
                targets=tuple(target or ()),
                offline=offline,
                locked=locked,
                timeout=timeout,
            )
            result = audit_project(path, options)
    except FeatcheckError as error:
        _fail(error)
    if output_format is OutputFormat.json:
        from featcheck.render.json_report import render_json

        sys.stdout.write(render_json(result))
    else:
        from featcheck.render.text_report import render_text

        render_text(result)
    if fail_on is not FailOn.never:
        level = Severity.parse(fail_on.value)
        if any(f.severity >= level for f in result.findings):
            raise typer.Exit(EXIT_FINDINGS)
    raise typer.Exit(EXIT_CLEAN)


def _read_tree_input(name: str) -> str:
    if name == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = Path(name).read_bytes()
        except OSError as error:
            raise FeatcheckError(f"cannot read: {error.strerror or error}", path=name) from None
    return data.decode("utf-8", errors="replace")


def _fail(error: FeatcheckError) -> None:
    lines = str(error).splitlines() or ["unknown error"]
    print(f"featcheck: error: {lines[0]}", file=sys.stderr)
    for line in lines[1:]:
        print(f"  {line}", file=sys.stderr)
    raise typer.Exit(EXIT_ERROR)


def main() -> None:
    """Console-script entry point."""
    app()
