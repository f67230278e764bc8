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

import re
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import NamedTuple, NewType

from featcheck.errors import FeatcheckError
from featcheck.featureset import FeatureSelection

Argument = NewType("Argument", str)

MAX_VALUE_LENGTH = 4096
"""No value that names a target, cfg, toolchain or package is longer; a longer one is refused."""


class GateError(ValueError):
    """A checkout value that does not match its grammar; the caller adds file and line."""


class Grammar(NamedTuple):
    what: str  # the kind of value, as an error message names it
    pattern: str  # matched whole; re compiles it at first use, as most grammars go unused
    example: str  # a valid value, shown in the error message

    def check(self, value: str) -> str:
        if not isinstance(value, str):
            raise GateError(f"{self.what} must be a string")
        if len(value) > MAX_VALUE_LENGTH or not re.fullmatch(self.pattern, value):
            raise GateError(f"{_shown(value)} is not {self.what} (such as {self.example})")
        return value


def _shown(value: str) -> str:
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
    """A `.json` path must be relative and stay inside the project (no `..`): the runner makes it
    absolute there. (rustc 1.95 reads custom target specifications only with
    `-Zunstable-options`, which featcheck never passes, so it refuses them itself.)"""
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
    if not re.fullmatch(r"--[a-z][a-z-]*|-C[a-z][a-z-]*", flag):
        raise GateError(f"{_shown(flag)} is not a flag")
    grammar.check(value)
    return Argument(f"{flag}={value}")


def refuse_unsafe(arguments: Sequence[str]) -> None:
    """Just before a process starts: no argument is an argument file (`@FILE`) or holds a NUL."""
    for argument in arguments:
        if not isinstance(argument, str) or argument.startswith("@") or "\x00" in argument:
            raise GateError(f"refusing to pass the argument {_shown(str(argument))}")


# The command lines featcheck gives cargo and rustc.


def checked_option(flag: str, value: str, grammar: Grammar) -> Argument:
    try:
        return option(flag, value, grammar)
    except GateError as error:
        raise FeatcheckError(f"{flag.lstrip('-')}: {error}") from None


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
    try:
        if target_triple(target).endswith(".json"):
            return option("--target", str(workdir.absolute() / target), ABSOLUTE_PATH)
        return option("--target", target, TARGET)
    except GateError as error:
        raise FeatcheckError(f"target: {error}") from None


# The rustflags featcheck lets reach rustc: those that change which cfg values it reports.
#
# Flags come from the checkout's configuration and from the environment (CI often exports them
# from checkout content); cargo passes them to the `rustc` it runs for its target probe, where
# `-Zcodegen-backend=LIB` would load a library.

KEPT_CODEGEN: dict[str, Grammar] = {
    "target-feature": TARGET_FEATURES,
    "target-cpu": Grammar("a CPU name", r"[A-Za-z0-9_][A-Za-z0-9_.+-]*", "`native` or `x86-64-v3`"),
    "panic": Grammar("a panic strategy", r"unwind|abort|immediate-abort", "`abort`"),
    "debug-assertions": Grammar(
        "a rustc on/off value", r"y|yes|on|true|n|no|off|false", "`yes` or `off`"
    ),
}
"""The grammar of each `-C` option that changes `target_feature`, `panic` or `debug_assertions`."""

# rustc options that take their value as the next argument (`-L DIR`, `--extern X=Y`, ...):
# that argument is the option's value, not an option of its own.
_TAKES_VALUE = {
    "--cfg", "--check-cfg", "-C", "--codegen", "-Z", "-L", "-l", "--crate-type", "--crate-name",
    "--edition", "--emit", "--print", "-o", "--out-dir", "--explain", "--target", "-A", "-W",
    "--force-warn", "-D", "-F", "--cap-lints", "--extern", "--sysroot", "--error-format",
    "--json", "--color", "--diagnostic-width", "--remap-path-prefix", "--env-set",
}  # fmt: skip


class RustflagError(Exception):
    """A rustflag that featcheck must not pass and cannot ignore."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index


def filter_rustflags(flags: list[str]) -> list[Argument]:
    """Kept: `--cfg NAME` / `--cfg NAME="VALUE"` as `--cfg=...`, and `-C` target-feature,
    target-cpu, panic and debug-assertions as `-CKEY=VALUE`. Everything else is dropped: `-Z`
    flags load code (`-Zcodegen-backend`, `-Zllvm-plugins`), `-L`/`--sysroot`/`--extern` point
    rustc at files, `--print` writes them, and none of them changes features.

    Raises RustflagError (with the flag's index) for a kept flag whose value does not match
    its grammar, and for an argument file (`@FILE`) anywhere: rustc would read more flags from
    that file, which featcheck neither passes on nor can ignore (they may set cfg values)."""
    kept: list[Argument] = []
    numbered = iter(enumerate(flags))
    for position, flag in numbered:
        if flag.startswith("@"):
            raise RustflagError(
                position,
                f"`{flag[:60]}` is a rustc argument file: featcheck does not pass it on (it may "
                "hold any rustc option) and cannot audit without the cfg values it may set",
            )
        if flag in _TAKES_VALUE:  # `--cfg X`, `-C key=value`, `-L DIR`
            if (following := next(numbered, None)) is None:
                break
            name, value = flag, following[1]
            if value.startswith("@"):
                raise RustflagError(
                    position + 1, f"`{value[:60]}` is a rustc argument file (after `{flag}`)"
                )
        elif flag.startswith("--") and "=" in flag:  # `--cfg=X`, `--codegen=key=value`
            name, value = flag.split("=", 1)
        elif flag.startswith("-C") and len(flag) > 2:  # `-Ckey=value`
            name, value = "-C", flag[2:]
        else:
            continue
        try:
            if name == "--cfg":
                kept.append(option("--cfg", value, CFG))
            elif name in ("-C", "--codegen"):
                key, equals, setting = value.partition("=")
                if key not in KEPT_CODEGEN:
                    continue
                if equals:
                    kept.append(option(f"-C{key}", setting, KEPT_CODEGEN[key]))
                elif key == "debug-assertions":  # `-C debug-assertions` alone means yes
                    kept.append(word(f"-C{key}"))
                else:
                    raise GateError(f"`-C {key}` needs a value")
        except GateError as error:
            raise RustflagError(position, f"`{name}` in rustflags: {error}") from None
    return kept


# A rustflags list whose flags featcheck drops all (`-C link-arg=...`) still replaces `[build]`'s
# for its target in cargo, where an empty list would not: cargo gets this flag in its place,
# which changes no cfg value (featcheck's cargo never compiles).
NEUTRAL_FLAGS = ["-Ccodegen-units=1"]


def environment_list(environment: Mapping[str, str], name: str) -> list[Argument] | None:
    """The kept flags of a rustflags list set through the environment (split at whitespace,
    as cargo splits it); None when unset or empty."""
    flags = environment.get(name, "").split()
    return _kept_flags(name, flags) if flags else None


def environment_rustflags(environment: Mapping[str, str]) -> list[Argument] | None:
    """The kept flags of CARGO_ENCODED_RUSTFLAGS or RUSTFLAGS, which replace every configured
    rustflag in cargo; None when neither is set."""
    if (encoded := environment.get("CARGO_ENCODED_RUSTFLAGS")) is not None:
        return _kept_flags("CARGO_ENCODED_RUSTFLAGS", encoded.split("\x1f") if encoded else [])
    if "RUSTFLAGS" in environment:
        return _kept_flags("RUSTFLAGS", environment["RUSTFLAGS"].split())
    return None


def _kept_flags(name: str, flags: list[str]) -> list[Argument]:
    try:
        return filter_rustflags(flags)
    except RustflagError as error:
        raise FeatcheckError(f"{name}: {error}") from None


def filter_environment_rustflags(environment: dict[str, str]) -> None:
    """The environment's rustflags through the configuration's allow-list (see above), in place.
    Each variable keeps its meaning: RUSTFLAGS and CARGO_ENCODED_RUSTFLAGS still replace every
    configured flag, a `CARGO_TARGET_<TRIPLE>_RUSTFLAGS` whose flags are all dropped still
    replaces `[build]`'s. Raises FeatcheckError for an argument file or a bad kept flag."""
    if (encoded := environment_rustflags(environment)) is not None:
        environment.pop("RUSTFLAGS", None)
        environment["CARGO_ENCODED_RUSTFLAGS"] = "\x1f".join(encoded)
    listed = [n for n in environment if n.startswith("CARGO_") and n.endswith("_RUSTFLAGS")]
    for name in [n for n in listed if n != "CARGO_ENCODED_RUSTFLAGS"]:
        kept = environment_list(environment, name)
        if not name.startswith("CARGO_TARGET_"):
            if kept:
                environment[name] = " ".join(kept)
            else:
                environment.pop(name)  # cargo adds it to the files' flags: nothing to add
        elif kept is not None:
            environment[name] = " ".join(kept or NEUTRAL_FLAGS)
