"""The settings of a cargo configuration file that featcheck passes on: data, never programs.

Much of a configuration is data that changes what cargo resolves (`[source]` replacement for
vendored crates, `[registries]`, `[patch]`, `--cfg` in rustflags), and much of it makes cargo
run something. Only the keys listed here pass, relative paths made absolute.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from featcheck.cargo.argv_gate import FEATURE, Argument, GateError
from featcheck.cargo.config_files import setting_error
from featcheck.cargo.rustflags import RustflagError, filter_rustflags
from featcheck.cargo.unification import MODE_KEY, MODES, UNSTABLE_KEY
from featcheck.manifest.document import ManifestDocument

if TYPE_CHECKING:
    # The span index (and `dataclasses`) loads only where a file's error needs a line.
    from featcheck.manifest.spans import KeyPath

_SOURCE_STRINGS = {"replace-with", "registry", "git", "branch", "tag", "rev"}
_SOURCE_PATHS = {"directory", "local-registry"}
_PATCH_STRINGS = {"git", "branch", "tag", "rev", "version", "package", "registry"}


# A NamedTuple, not a dataclass: made before cargo starts (see audit.py).
class Leaf(NamedTuple):
    key: tuple[str, ...]
    value: Any


def _as_flags(value: object) -> list[str] | None:
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def _absolute(value: object, base: Path) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    return str(base / value) if not Path(value).is_absolute() else value


def tables(value: object) -> Iterator[tuple[str, dict[str, Any]]]:
    """The `[NAME]` tables of a table (anything else in it is not a table cargo reads)."""
    if isinstance(value, dict):
        for name, table in value.items():
            if isinstance(name, str) and isinstance(table, dict):
                yield name, table


def _rustflags(document: ManifestDocument, path: KeyPath, value: object) -> list[Argument] | None:
    """The kept rustflags of the setting at `path` (perhaps none of them), None when it sets
    no flag at all, or a FeatcheckError at the bad flag. A `[target]` table whose flags are all
    dropped still counts: cargo then gives that target none of `[build]`'s flags."""
    flags = _as_flags(value)
    if not flags:
        return None
    try:
        return filter_rustflags(flags)
    except RustflagError as error:
        at = (*path, error.index) if isinstance(value, list) else path
        raise setting_error(document, at, error.message) from None


def allowed_leaves(document: ManifestDocument, base: Path) -> Iterator[Leaf]:
    """The allow-listed settings of one configuration file, paths made absolute from `base`.

    Raises FeatcheckError at the offending line for a value that would reach rustc's argument
    vector and does not match its grammar (rustflags, `[patch]` features).
    """
    data = document.data
    paths = data.get("paths")
    if isinstance(paths, list):
        absolute = [_absolute(p, base) for p in paths]
        if absolute and all(a is not None for a in absolute):
            yield Leaf(("paths",), absolute)
    yield from _source_leaves(data, base)
    yield from _patch_leaves(document, base)
    yield from _network_leaves(data)
    yield from _unification_leaves(document)
    yield from _rustflags_leaves(document)


def _source_leaves(data: dict[str, Any], base: Path) -> Iterator[Leaf]:
    """`[source.NAME]` and `[registries.NAME]`: where crates come from."""
    for name, table in tables(data.get("source")):
        for key, value in table.items():
            if key in _SOURCE_STRINGS and isinstance(value, str):
                yield Leaf(("source", name, key), value)
            elif key in _SOURCE_PATHS and (path := _absolute(value, base)) is not None:
                yield Leaf(("source", name, key), path)
    for name, table in tables(data.get("registries")):
        if isinstance(table.get("index"), str):
            yield Leaf(("registries", name, "index"), table["index"])
        if name == "crates-io" and isinstance(table.get("protocol"), str):
            yield Leaf(("registries", name, "protocol"), table["protocol"])


def _patch_leaves(document: ManifestDocument, base: Path) -> Iterator[Leaf]:
    """`[patch.SOURCE.CRATE]`: its features reach cargo's argument vector, checked by the gate."""
    for source, crates in tables(document.data.get("patch")):
        for crate, spec in tables(crates):
            for key, value in spec.items():
                where = ("patch", source, crate, key)
                if key in _PATCH_STRINGS and isinstance(value, str):
                    yield Leaf(where, value)
                elif key == "path" and (path := _absolute(value, base)) is not None:
                    yield Leaf(where, path)
                elif key == "default-features" and isinstance(value, bool):
                    yield Leaf(where, value)
                elif key == "features" and isinstance(value, list):
                    for index, feature in enumerate(value):
                        try:
                            FEATURE.check(feature)
                        except GateError as error:
                            raise setting_error(document, (*where, index), str(error)) from None
                    yield Leaf(where, value)


def _network_leaves(data: dict[str, Any]) -> Iterator[Leaf]:
    """`[net]` offline and retry, and `[resolver]`'s choice of versions."""
    net = data.get("net")
    if isinstance(net, dict):
        if isinstance(net.get("offline"), bool):
            yield Leaf(("net", "offline"), net["offline"])
        if isinstance(net.get("retry"), int) and not isinstance(net.get("retry"), bool):
            yield Leaf(("net", "retry"), net["retry"])
    resolver = data.get("resolver")
    if isinstance(resolver, dict) and isinstance(resolver.get("incompatible-rust-versions"), str):
        yield Leaf(
            ("resolver", "incompatible-rust-versions"), resolver["incompatible-rust-versions"]
        )


def _unification_leaves(document: ManifestDocument) -> Iterator[Leaf]:
    """`[resolver] feature-unification` and the `[unstable]` flag nightly cargo needs to read
    it (cargo/unification.py). A value cargo would refuse is refused at its line: any cargo
    refuses to start on an unknown mode, nightly cargo on a flag that is not a boolean."""
    for key, expected in (
        (MODE_KEY, '"selected", "workspace" or "package"'),
        (UNSTABLE_KEY, "true or false"),
    ):
        table = document.data.get(key[0])
        if not isinstance(table, dict) or key[1] not in table:
            continue
        value = table[key[1]]
        if not (value in MODES if key == MODE_KEY else isinstance(value, bool)):
            message = f"`{'.'.join(key)}` must be {expected}, as cargo reads it"
            raise setting_error(document, key, message)
        yield Leaf(key, value)


def _rustflags_leaves(document: ManifestDocument) -> Iterator[Leaf]:
    """The kept rustflags of `[build]` and of each `[target]` table."""
    build = document.data.get("build")
    if isinstance(build, dict):
        flags: tuple[str, ...] = ("build", "rustflags")
        if (kept := _rustflags(document, flags, build.get("rustflags"))) is not None:
            yield Leaf(flags, kept)
    # `[target.<triple>]` and `[target.'cfg(...)']`: the table name stays a TOML key.
    for target, table in tables(document.data.get("target")):
        flags = ("target", target, "rustflags")
        if (kept := _rustflags(document, flags, table.get("rustflags"))) is not None:
            yield Leaf(flags, kept)
