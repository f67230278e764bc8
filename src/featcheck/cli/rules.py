"""`featcheck rules [PATH]` and `featcheck rule CODE [PATH]`: the rules' documentation, the
project's own rules ([[rule]] entries) included."""

from __future__ import annotations

import argparse
import sys

import featcheck.cli.lazy as lazy
from featcheck.cli.terminal import EXIT_CLEAN, fail, print_checkout_text, report_width
from featcheck.errors import FeatcheckError
from featcheck.render.safe_text import safe_line


def list_rules(arguments: argparse.Namespace) -> int:
    """Every rule: code, name, default severity and what it checks."""
    try:
        table = lazy.rule_table(arguments.path, report_width(None) or 100)
    except FeatcheckError as error:
        fail(error)
    print_checkout_text("\n".join(table))
    return EXIT_CLEAN


def show_rule(arguments: argparse.Namespace) -> int:
    """One rule's page: Markdown as written for a pager, a file or the docs; rendered on a
    terminal."""
    try:
        text = lazy.rule_markdown(arguments.code, arguments.path)
    except FeatcheckError as error:
        fail(error)
    if text is None:
        fail(FeatcheckError(f"unknown rule {arguments.code!r} (see `featcheck rules`)"))
    if not sys.stdout.isatty():
        print_checkout_text(text)
        return EXIT_CLEAN
    # A project's own rule text is the checkout's: made printable and inert first.
    lazy.print_markdown("\n".join(safe_line(line) for line in text.splitlines()))
    return EXIT_CLEAN
