"""The one gate between what a checkout says and the argument vectors of cargo, rustc and rustup.

rustc expands any argument that starts with `@` into more arguments read from that file, and
every program reads an argument that starts with `-` as an option. A checkout value passed as
`--target @F` or `--cfg @F` therefore lets the checkout give rustc any option it likes:
`--print=cfg=PATH` overwrites a file, `-Zcodegen-backend=LIB` (nightly) loads a library. So a
value from the checkout (configuration, toolchain file, manifest, and command-line values that
stand for them) reaches an argument vector only

- after it matched the grammar cargo documents for it (a target triple, a cfg name or
  `name="value"`, a toolchain name, a package id specification, a feature name), and
- inside one `--flag=value` argument, never as an argument of its own.

`Argument` is what runners put on a command line: `word()` makes one from featcheck's own fixed
flags and subcommands, `option()` from a flag and a value checked against a `Grammar`. A plain
`str` does not type-check as an `Argument`, and `refuse_unsafe()` checks every argument vector
once more just before a process starts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import NamedTuple, NewType

from featcheck.errors import FeatcheckError
from featcheck.featureset import FeatureSelection
from featcheck.fileio import special_manifest

Argument = NewType("Argument", str)
"""One element of an argument vector, made by `word()` or `option()`."""

MAX_VALUE_LENGTH = 4096
"""No value that names a target, cfg, toolchain or package is longer; a longer one is refused."""


class GateError(ValueError):
    """A checkout value that does not match its grammar; the caller adds file and line."""


# A NamedTuple, not a dataclass: made before cargo starts (see audit.py).
class Grammar(NamedTuple):
    """What one kind of value may look like, as cargo and rustc document it."""

    what: str
    """The kind of value, as an error message names it."""
    pattern: str
    """A regular expression the whole value matches; compiled at its first use (re's cache),
    since most grammars are used by no audit at all."""
    example: str
    """A valid value, shown in the error message."""

    def check(self, value: str) -> str:
        """`value` unchanged when it matches; GateError otherwise."""
        if not isinstance(value, str):
            raise GateError(f"{self.what} must be a string")
        if len(value) > MAX_VALUE_LENGTH or not re.fullmatch(self.pattern, value):
            raise GateError(f"{_shown(value)} is not {self.what} (such as {self.example})")
        return value


def _shown(value: str) -> str:
    """A value quoted for an error message: short, control characters escaped."""
    text = value if len(value) <= 80 else value[:77] + "..."
    escaped = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)
    return f"`{escaped}`"


# A built-in target triple: `x86_64-unknown-linux-gnu`, `thumbv7em-none-eabihf`, `avr-none`,
# `armv7a-kmc-solid_asp3-eabi`. Letters, digits, `_` and `.` in dash-separated parts.
_TRIPLE = r"[A-Za-z0-9][A-Za-z0-9_.]*(-[A-Za-z0-9_.]+)*"
# A custom target specification: a relative path to a `.json` file inside the checkout.
_JSON_SPEC = r"[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*\.json"

TARGET = Grammar(
    "a target triple or a relative path to a `.json` target specification inside the project",
    f"{_TRIPLE}|{_JSON_SPEC}",
    "`x86_64-unknown-linux-gnu`",
)
# `--cfg`: what cargo can read back from `rustc --print cfg` (cargo-platform's identifiers are
# ASCII, rustc's `_` alone is no identifier; a raw `r#name` is `name`), then `="value"` without
# escapes (rustc would unescape `\"`, and cargo cannot parse what rustc then prints).
CFG = Grammar(
    'a cfg name or `name="value"`',
    r'(r#)?([A-Za-z][A-Za-z0-9_]*|_[A-Za-z0-9_]+)(\s*=\s*"[^"\\\x00-\x1f\x7f]*")?',
    '`tokio_unstable` or `feature="simd"`',
)
# `-C target-feature`: comma-separated names, each `+` to enable or `-` to disable it (rustc's
# codegen options). Names hold letters, digits, `-`, `_` and `.` (`crt-static`, `sse4.1`,
# `v8.1a`, `soft-float`). rustc only warns about a name without `+`/`-` and ignores it, and
# skips empty items: refusing them would refuse a configuration cargo builds with. Items are
# apart by commas only, so that `+crt-static` is one name, never `+crt` and `-static`.
_TARGET_FEATURE = r"[+-]?[A-Za-z0-9][A-Za-z0-9_.-]*"
TARGET_FEATURES = Grammar(
    "a list of target features",
    rf",*({_TARGET_FEATURE}(,+{_TARGET_FEATURE})*)?,*",
    "`+avx2,+fma` or `+crt-static`",
)
TARGET_CPU = Grammar("a CPU name", r"[A-Za-z0-9_][A-Za-z0-9_.+-]*", "`native` or `x86-64-v3`")
PANIC = Grammar("a panic strategy", r"unwind|abort|immediate-abort", "`abort`")
SWITCH = Grammar("a rustc on/off value", r"y|yes|on|true|n|no|off|false", "`yes` or `off`")
TOOLCHAIN = Grammar(
    "a toolchain name (a channel)",
    r"[A-Za-z0-9][A-Za-z0-9._+-]*",
    "`stable`, `1.85` or `nightly-2026-01-01`",
)
FEATURE = Grammar(
    "a feature name",
    r"(dep:)?[A-Za-z0-9_][A-Za-z0-9_+.-]*(\??/[A-Za-z0-9_][A-Za-z0-9_+.-]*)?",
    "`rayon` or `serde/std`",
)
PACKAGE_SPEC = Grammar(
    "a package id specification",
    # `name`, `name@1.2.3`, or the id cargo metadata prints (`path+file:///...#name@1.2.3`):
    # no leading option or argument-file character, no control characters.
    r"[A-Za-z0-9_][^\x00-\x1f\x7f]*",
    "`app@0.1.0`",
)
ABSOLUTE_PATH = Grammar(
    "an absolute path", r"/[^\x00]*|[A-Za-z]:[\\/][^\x00]*", "`/src/app/Cargo.toml`"
)
CONFIG_SETTING = Grammar(
    "a cargo configuration setting",
    # `KEY=VALUE` with a key of featcheck's allow-list and a value that tomlkit wrote.
    r"[A-Za-z][^\n\r\x00]*=[^\n\r\x00]*",
    "`net.offline=true`",
)

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*|--?[A-Za-z][A-Za-z0-9-]*")


def target_triple(value: str) -> str:
    """A target from the checkout (or the command line): a triple, or a `.json` spec path.

    A `.json` path must be relative and stay inside the project (no `..`): the runner makes it
    absolute there. (rustc 1.95 reads custom target specifications only with
    `-Zunstable-options`, which featcheck never passes, so it refuses them itself.)
    """
    TARGET.check(value)
    if value.endswith(".json") and ".." in PurePosixPath(value).parts:
        raise GateError(f"{_shown(value)} leaves the project")
    return value


def word(text: str) -> Argument:
    """One of featcheck's own fixed arguments: a subcommand or a flag (`tree`, `--locked`)."""
    if not _WORD.fullmatch(text):
        raise GateError(f"{_shown(text)} is not a fixed argument")
    return Argument(text)


def option(flag: str, value: str, grammar: Grammar) -> Argument:
    """`--flag=value` as one argument, after `value` matched `grammar`.

    One argument, because the value then can never be read as an option or an argument file
    of its own, whatever it holds.
    """
    if not re.fullmatch(r"--[a-z][a-z-]*|-C[a-z][a-z-]*", flag):
        raise GateError(f"{_shown(flag)} is not a flag")
    grammar.check(value)
    return Argument(f"{flag}={value}")


def refuse_unsafe(arguments: Sequence[str]) -> None:
    """The last check before a process starts: no argument is an argument file (`@FILE`) or
    holds a NUL. Raises GateError; a caller that built its arguments with `word()`
    and `option()` never sees it."""
    for argument in arguments:
        if not isinstance(argument, str) or argument.startswith("@") or "\x00" in argument:
            raise GateError(f"refusing to pass the argument {_shown(str(argument))}")


# The command lines featcheck gives cargo and rustc, and what cargo's messages say of places.

# `{p} [{f}]` gives "name vX (source) [features]" per line; `--prefix depth` makes the nesting
# unambiguous and `--charset ascii` keeps the text independent of the terminal.
TREE_FORMAT = "{p} [{f}]"


def gated(check: Callable[[str], str], value: str, what: str) -> str:
    """`check(value)`, its GateError as the one-line error of an audit."""
    try:
        return check(value)
    except GateError as error:
        raise FeatcheckError(f"{what}: {error}") from None


def checked_option(flag: str, value: str, grammar: Grammar) -> Argument:
    """`--flag=value` for a value that passes `grammar`; else the audit's one-line error."""
    try:
        return option(flag, value, grammar)
    except GateError as error:
        raise FeatcheckError(f"{flag.lstrip('-')}: {error}") from None


def constant(flag: str, value: str) -> Argument:
    """`--flag=value` for a value that is featcheck's own constant, never checkout text."""
    return Argument(f"{flag}={value}")


def feature_arguments(selection: FeatureSelection) -> list[Argument]:
    """cargo's feature flags: one `--features=NAME` per feature (each checked by the gate;
    `featureset` already holds them to cargo's grammar), then the switches."""
    found = [checked_option("--features", name, FEATURE) for name in selection.features]
    if selection.no_default_features:
        found.append(word("--no-default-features"))
    if selection.all_features:
        found.append(word("--all-features"))
    return found


def manifest_argument(manifest_path: Path) -> Argument:
    # Absolute: cargo runs in another directory.
    return checked_option("--manifest-path", str(manifest_path.absolute()), ABSOLUTE_PATH)


def target_argument(workdir: Path, target: str) -> Argument:
    """`--target=T` for a target that passed the gate. A custom target file (`x.json`) is
    named relative to the audited directory (`workdir`), as when cargo ran there, and made
    absolute for cargo and rustc running elsewhere."""
    target = gated(target_triple, target, "target")
    if target.endswith(".json"):
        return checked_option("--target", str(workdir.absolute() / target), ABSOLUTE_PATH)
    return checked_option("--target", target, TARGET)


_LOCATION = re.compile(r"^(?P<lead>\s*-->\s+)(?P<path>.+?)(?P<place>(:\d+)+)?$", re.MULTILINE)


def relative_locations(stderr: str, cwd: Path) -> str:
    """cargo's `--> FILE:LINE:COL` names FILE relative to cargo's working directory; name it
    relative to featcheck's own (or absolutely, outside it) so that it can be opened."""

    def rewrite(match: re.Match[str]) -> str:
        path = match["path"]
        full = os.path.normpath(os.path.join(cwd, path))
        try:
            here = os.getcwd()
            shown = os.path.relpath(full, here) if Path(full).is_relative_to(here) else full
        except (OSError, ValueError):
            shown = full
        return match["lead"] + shown + (match["place"] or "")

    return _LOCATION.sub(rewrite, stderr)


_MANIFEST_NAMES = frozenset({"Cargo.toml", "Cargo.lock"})


def refuse_special_manifests(manifest_path: Path, checkout: Path) -> None:
    """Refuse a FIFO or device named Cargo.toml or Cargo.lock anywhere cargo may read one
    (below the outermost directory with a Cargo.toml): cargo would block on it until the
    timeout; and, in the checkout, one that links out of it (see `special_manifest`)."""
    root = manifest_path.absolute().parent
    for directory in root.parents:
        if (directory / "Cargo.toml").is_file():
            root = directory
    found = special_manifest(root, _MANIFEST_NAMES, checkout)
    if found is not None:
        raise FeatcheckError(found[1], path=found[0])
