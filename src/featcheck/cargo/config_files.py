"""The cargo configuration files cargo would read, as documents, and their allow-listed
settings (`allowed_leaves`): data, never programs (see checkout_config.py).

A file outside the project (reached by `include`) is never quoted in an error, and none is read
through a link out of the checkout.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from featcheck.boundary import (
    MAX_CONFIG_BYTES,
    LeadsOut,
    configured_path_stays_inside,
    decode_text,
    is_inside,
    read_checkout_file,
)
from featcheck.cargo.argv_gate import (
    FEATURE,
    Argument,
    GateError,
    RustflagError,
    filter_rustflags,
    target_triple,
)
from featcheck.cargo.failures import printable
from featcheck.cargo.pending_metadata import MODE_KEY, MODES, UNSTABLE_KEY
from featcheck.errors import FeatcheckError
from featcheck.manifest.document import ManifestDocument, parse_text

if TYPE_CHECKING:
    # The span index (and `dataclasses`) loads only where a file's error needs a line.
    from featcheck.manifest.spans import KeyPath

_MAX_INCLUDE_DEPTH = 16

_NOT_STRINGS = "must be a string or an array of strings, as cargo reads it"

NOT_SHOWN = "its text is not shown: it lies outside the project that includes it"


def setting_error(document: ManifestDocument, path: KeyPath, message: str) -> FeatcheckError:
    """`message` at the line where `path` is written in a configuration file."""
    line = column = None
    with contextlib.suppress(ValueError):  # the span index gives up on some odd layouts
        while path:
            if (entry := document.spans.get(path)) is not None:
                span = entry.value or entry.key
                line, column = span.line, span.column
                break
            path = path[:-1]
    return FeatcheckError(message, path=document.path, line=line, column=column)


@contextlib.contextmanager
def unquoted_outside(within: bool, path: Path, refusal: str) -> Iterator[None]:
    """A FeatcheckError of a file outside the project (reached by `include`) becomes `refusal`:
    that file may be any file of the machine, and is never quoted. One that a link inside the
    checkout leads to outside it is refused by the link's own name, and not read (boundary.py)."""
    try:
        yield
    except FeatcheckError as error:
        if within or isinstance(error, LeadsOut):
            raise
        raise FeatcheckError(f"{refusal} ({NOT_SHOWN})", path=path) from None


def _includes(document: ManifestDocument, checkout: Path | None) -> Iterator[tuple[Path, bool]]:
    """The files `include` names (relative to the including file), as cargo resolves them:
    each must be a `.toml` file; `{ path = "...", optional = true }` may be missing. A file of
    the checkout (`checkout`: its root; None for a file of the user's) includes only files
    inside it: featcheck would read and obey any other file of the machine for it."""
    entries = document.data.get("include")
    if isinstance(entries, str):
        entries = [entries]
    if not isinstance(entries, list):
        return
    for index, entry in enumerate(entries):
        optional = isinstance(entry, dict) and entry.get("optional") is True
        if isinstance(entry, dict):
            entry = entry.get("path")
        if not isinstance(entry, str):
            continue
        directory = document.path.parent
        if not entry.endswith(".toml"):
            refusal = f"cargo includes only `.toml` files, not `{entry[:60]}`"
        elif checkout is not None and not configured_path_stays_inside(directory, entry, checkout):
            refusal = (
                f"`include` names `{printable(entry)}`, outside the checkout: its cargo "
                "configuration includes only files inside it"
            )
        else:
            yield directory / entry, optional
            continue
        raise setting_error(document, ("include", index), refusal)


def load(
    path: Path, inside: Path, root: Path | None, seen: tuple[Path, ...] = ()
) -> Iterator[tuple[ManifestDocument, Path, bool]]:
    """One configuration file and what it includes, lowest precedence first, each with
    whether it lies inside the project (`inside`)."""
    if len(seen) > _MAX_INCLUDE_DEPTH or path in seen:
        raise FeatcheckError("cargo configuration includes itself", path=path)
    try:
        within = path.resolve().is_relative_to(inside.resolve())
    except (OSError, RuntimeError):
        within = False
    with unquoted_outside(within, path, "cannot be read as a cargo configuration file"):
        raw = read_checkout_file(path, "cargo configuration file", MAX_CONFIG_BYTES, root)
        document = parse_text(path, decode_text(raw, path))
    checkout = root if root is not None and is_inside(path, root) else None
    with unquoted_outside(within, path, "`include` refused"):
        includes = list(_includes(document, checkout))
    for included, optional in includes:
        if optional and not included.exists():
            continue
        yield from load(included, inside, root, (*seen, path))
    yield document, path.parent.parent, within


def config_files(workdir: Path, cargo_home: Path | None, untrusted_home: Path | None) -> list[Path]:
    """The files cargo would read from `workdir` upward, lowest precedence (root) first, after
    the configuration of an untrusted CARGO_HOME (lowest of all, as cargo reads its home)."""
    names = ("config", "config.toml")  # cargo prefers `config` when both exist
    home_files = [cargo_home / name for name in names] if cargo_home is not None else []
    found: list[Path] = []
    directory = workdir.absolute()
    for candidate in (directory, *directory.parents):
        for name in names:
            file = candidate / ".cargo" / name
            with contextlib.suppress(OSError):
                if not file.exists():
                    continue
                if any(h.exists() and file.samefile(h) for h in home_files):
                    break  # CARGO_HOME's own file: cargo reads it anyway
            found.append(file)
            break
    found.reverse()
    home = home_config(untrusted_home)
    if home is not None and not any(home.samefile(f) for f in found if f.exists()):
        found.insert(0, home)
    return found


def home_config(cargo_home: Path | None) -> Path | None:
    if cargo_home is None:
        return None
    return next((f for n in ("config", "config.toml") if (f := cargo_home / n).is_file()), None)


def configuration_documents(
    workdir: Path, cargo_home: Path | None, untrusted_home: Path | None, root: Path
) -> Iterator[tuple[ManifestDocument, Path, Path]]:
    """Every configuration file cargo reads when run in `workdir`, with what each includes,
    lowest precedence first: the (trusted) CARGO_HOME's own file, then the files from the
    root down to `workdir` (after an untrusted home's, see `config_files`). Each comes with
    the directory its relative paths start from and the file that was read (or included it).
    No file is read through a link out of the checkout `root` (the user's own home aside)."""
    if (home := home_config(cargo_home)) is not None:
        for document, base, _ in load(home, home.parent.parent, None):
            yield document, base, home
    for file in config_files(workdir, cargo_home, untrusted_home):
        for document, base, _ in load(file, file.parent.parent, root):
            yield document, base, file


_SOURCE_STRINGS = {"replace-with", "registry", "git", "branch", "tag", "rev"}
_SOURCE_PATHS = {"directory", "local-registry"}
_PATCH_STRINGS = {"git", "branch", "tag", "rev", "version", "package", "registry"}


class Leaf(NamedTuple):
    key: tuple[str, ...]
    value: Any


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
    if value is None:
        return None
    flags = value.split() if isinstance(value, str) else value
    if not isinstance(flags, list) or not all(isinstance(v, str) for v in flags):
        raise setting_error(document, path, _NOT_STRINGS)  # cargo refuses it too
    if not flags:
        return None
    try:
        return filter_rustflags(flags)
    except RustflagError as error:
        at = (*path, error.index) if isinstance(value, list) else path
        raise setting_error(document, at, str(error)) from None


def allowed_leaves(document: ManifestDocument, base: Path) -> Iterator[Leaf]:
    """Paths are made absolute from `base`. Raises FeatcheckError at the line of a value that
    would reach rustc's argument vector and does not match its grammar (rustflags, features)."""
    data = document.data
    if isinstance(paths := data.get("paths"), list):
        absolute = [_absolute(p, base) for p in paths]
        if absolute and all(a is not None for a in absolute):
            yield Leaf(("paths",), absolute)
    yield from _source_leaves(data, base)
    yield from _patch_leaves(document, base)
    if isinstance(net := data.get("net"), dict):
        if isinstance(net.get("offline"), bool):
            yield Leaf(("net", "offline"), net["offline"])
        if isinstance(net.get("retry"), int) and not isinstance(net.get("retry"), bool):
            yield Leaf(("net", "retry"), net["retry"])
    resolver = data.get("resolver")
    versions = resolver.get("incompatible-rust-versions") if isinstance(resolver, dict) else None
    if isinstance(versions, str):
        yield Leaf(("resolver", "incompatible-rust-versions"), versions)
    # `[resolver] feature-unification` and the `[unstable]` flag nightly cargo needs to read it
    # (cargo/pending_metadata.py). A value cargo would refuse is refused at its line: any cargo
    # refuses to start on an unknown mode, nightly cargo on a flag that is not a boolean.
    for key, expected in (
        (MODE_KEY, '"selected", "workspace" or "package"'),
        (UNSTABLE_KEY, "true or false"),
    ):
        if isinstance(table := data.get(key[0]), dict) and key[1] in table:
            if not (table[key[1]] in MODES if key == MODE_KEY else isinstance(table[key[1]], bool)):
                message = f"`{'.'.join(key)}` must be {expected}, as cargo reads it"
                raise setting_error(document, key, message)
            yield Leaf(key, table[key[1]])
    # The targets a plain `cargo build` (and `cargo tree`) builds for: featcheck's own default.
    if isinstance(table := data.get("build"), dict) and "target" in table:
        yield Leaf(("build", "target"), _build_targets(document, table["target"]))
    # `[build]`, then `[target.<triple>]` and `[target.'cfg(...)']` (the name stays a TOML key).
    build = [(("build",), data["build"])] if isinstance(data.get("build"), dict) else []
    targets = [(("target", name), table) for name, table in tables(data.get("target"))]
    for table_key, table in [*build, *targets]:
        flags = (*table_key, "rustflags")
        if (kept := _rustflags(document, flags, table.get("rustflags"))) is not None:
            yield Leaf(flags, kept)


def _build_targets(document: ManifestDocument, value: object) -> list[str]:
    """`build.target`, one target or several: triples, which the argument gate checks. Not a
    target file (`x.json`), which featcheck does not follow: `--target TRIPLE` audits another."""
    named = [value] if isinstance(value, str) else value
    key = ("build", "target")
    if not isinstance(named, list) or not all(isinstance(t, str) for t in named):
        raise setting_error(document, key, _NOT_STRINGS)
    if any(t.endswith(".json") for t in named):
        message = "featcheck does not follow a target file: pass --target TRIPLE to audit one"
        raise setting_error(document, key, message)
    try:
        return [target_triple(t) for t in named]
    except GateError as error:
        raise setting_error(document, key, str(error)) from None


def _source_leaves(data: dict[str, Any], base: Path) -> Iterator[Leaf]:
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
