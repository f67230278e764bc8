"""The data a checkout's `.cargo/config.toml` gives cargo, without the parts that run programs.

cargo reads `.cargo/config.toml` (and `.cargo/config`, and what they `include`) from its working
directory upward. Much of it is data that changes what cargo resolves (`[source]` replacement
for vendored crates, `[registries]`, `[patch]`, `--cfg` in rustflags), and much of it makes
cargo run something, even for `cargo metadata`: `build.rustc` and the wrappers run for the
`rustc -vV` probe, `[env]` sets variables such as LD_PRELOAD for that probe, rustflags can load
a codegen backend (`-Zcodegen-backend`, with `[env] RUSTC_BOOTSTRAP` even on stable), and
credential providers and `net.git-fetch-with-cli` start programs for network access.

So featcheck runs cargo from a neutral directory, where it reads none of the checkout's
configuration, and hands it an allow-list of the data keys as `--config KEY=VALUE` arguments,
relative paths made absolute. Everything not on the list is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import ParseError

from featcheck.cargo.toolchain import read_small_file
from featcheck.errors import FeatcheckError

MAX_KEYS = 2000
"""More settings than this from the checkout is not a real project: refuse, not E2BIG."""
_MAX_INCLUDE_DEPTH = 16

_SOURCE_STRINGS = {"replace-with", "registry", "git", "branch", "tag", "rev"}
_SOURCE_PATHS = {"directory", "local-registry"}
_PATCH_STRINGS = {"git", "branch", "tag", "rev", "version", "package", "registry"}

# rustc flags that only change cfg values or code generation of the (never built) crates.
_KEPT_CODEGEN = re.compile(
    r"(target-cpu|target-feature|panic|relocation-model|opt-level|debug-assertions"
    r"|overflow-checks)(=[^\s]*)?"
)
_VALUE_FLAGS = {"--cfg", "--check-cfg", "-C", "--codegen"}


@dataclass(frozen=True)
class _Leaf:
    key: tuple[str, ...]
    value: Any


def filter_rustflags(flags: list[str]) -> list[str]:
    """The flags that only set cfg values (`--cfg`, `-C target-feature=...`, ...).

    Everything else is dropped: `-Z` flags load code (`-Zcodegen-backend`, `-Zllvm-plugins`),
    `-L`/`--sysroot`/`--extern` point rustc at files, and none of them changes features.
    """
    kept: list[str] = []
    index = 0
    while index < len(flags):
        flag = flags[index]
        index += 1
        if flag in _VALUE_FLAGS:  # `--cfg X`, `-C key=value`
            if index >= len(flags):
                break
            name, value = flag, flags[index]
            index += 1
        elif flag.startswith("--") and "=" in flag:  # `--cfg=X`, `--codegen=key=value`
            name, value = flag.split("=", 1)
        elif flag.startswith("-C") and len(flag) > 2:  # `-Ckey=value`
            name, value = "-C", flag[2:]
        else:
            continue
        if value.startswith("-"):
            continue
        if name in ("--cfg", "--check-cfg"):
            kept += [name, value]
        elif name in ("-C", "--codegen") and _KEPT_CODEGEN.fullmatch(value):
            kept += ["-C", value]
    return kept


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


def _tables(value: object) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(value, dict):
        for name, table in value.items():
            if isinstance(name, str) and isinstance(table, dict):
                yield name, table


def allowed_leaves(document: Mapping[str, Any], base: Path) -> Iterator[_Leaf]:
    """The allow-listed settings of one configuration file, paths made absolute from `base`."""
    paths = document.get("paths")
    if isinstance(paths, list):
        absolute = [_absolute(p, base) for p in paths]
        if absolute and all(a is not None for a in absolute):
            yield _Leaf(("paths",), absolute)
    for name, table in _tables(document.get("source")):
        for key, value in table.items():
            if key in _SOURCE_STRINGS and isinstance(value, str):
                yield _Leaf(("source", name, key), value)
            elif key in _SOURCE_PATHS and (path := _absolute(value, base)) is not None:
                yield _Leaf(("source", name, key), path)
    for name, table in _tables(document.get("registries")):
        for key in ("index", "protocol"):
            if isinstance(table.get(key), str):
                yield _Leaf(("registries", name, key), table[key])
    registry = document.get("registry")
    if isinstance(registry, dict) and isinstance(registry.get("default"), str):
        yield _Leaf(("registry", "default"), registry["default"])
    for source, crates in _tables(document.get("patch")):
        for crate, spec in _tables(crates):
            for key, value in spec.items():
                if key in _PATCH_STRINGS and isinstance(value, str):
                    yield _Leaf(("patch", source, crate, key), value)
                elif key == "path" and (path := _absolute(value, base)) is not None:
                    yield _Leaf(("patch", source, crate, key), path)
                elif (key == "default-features" and isinstance(value, bool)) or (
                    key == "features" and isinstance(value, list) and _as_flags(value) is not None
                ):
                    yield _Leaf(("patch", source, crate, key), value)
    net = document.get("net")
    if isinstance(net, dict):
        if isinstance(net.get("offline"), bool):
            yield _Leaf(("net", "offline"), net["offline"])
        if isinstance(net.get("retry"), int) and not isinstance(net.get("retry"), bool):
            yield _Leaf(("net", "retry"), net["retry"])
    resolver = document.get("resolver")
    if isinstance(resolver, dict) and isinstance(resolver.get("incompatible-rust-versions"), str):
        yield _Leaf(
            ("resolver", "incompatible-rust-versions"), resolver["incompatible-rust-versions"]
        )
    build = document.get("build")
    if (
        isinstance(build, dict)
        and (flags := _as_flags(build.get("rustflags")))
        and (kept := filter_rustflags(flags))
    ):
        yield _Leaf(("build", "rustflags"), kept)
    for target, table in _tables(document.get("target")):
        if (flags := _as_flags(table.get("rustflags"))) and (kept := filter_rustflags(flags)):
            yield _Leaf(("target", target, "rustflags"), kept)


def _load(path: Path, seen: tuple[Path, ...]) -> Iterator[tuple[Mapping[str, Any], Path]]:
    """One configuration file and what it includes, lowest precedence first."""
    if len(seen) > _MAX_INCLUDE_DEPTH or path in seen:
        raise FeatcheckError("cargo configuration includes itself", path=path)
    data = read_small_file(path, "cargo configuration file")
    try:
        document = tomlkit.parse(data.decode("utf-8")).unwrap()
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise FeatcheckError("invalid UTF-8 in cargo configuration", path=path, line=line) from None
    except ParseError as error:
        raise FeatcheckError(
            f"invalid TOML in cargo configuration: {error}", path=path, line=error.line
        ) from None
    except Exception as error:  # tomlkit raises a few other types on hostile input
        raise FeatcheckError(f"invalid TOML in cargo configuration: {error}", path=path) from None
    includes = document.get("include")
    if isinstance(includes, list):
        for entry in includes:
            optional = False
            if isinstance(entry, dict):
                optional = entry.get("optional") is True
                entry = entry.get("path")
            if not isinstance(entry, str):
                continue
            included = path.parent / entry
            if optional and not included.exists():
                continue
            yield from _load(included, (*seen, path))
    yield document, path.parent.parent


def _config_files(workdir: Path, cargo_home: Path | None) -> list[Path]:
    """The files cargo would read from `workdir` upward, lowest precedence (root) first."""
    home_files: list[Path] = []
    if cargo_home is not None:
        home_files = [cargo_home / "config", cargo_home / "config.toml"]
    found: list[Path] = []
    directory = workdir.absolute()
    for candidate in (directory, *directory.parents):
        for name in ("config", "config.toml"):  # cargo prefers `config` when both exist
            file = candidate / ".cargo" / name
            try:
                if not file.exists():
                    continue
                if any(h.exists() and file.samefile(h) for h in home_files):
                    break  # CARGO_HOME's own file: cargo reads it anyway
            except OSError:
                pass
            found.append(file)
            break
    return found[::-1]


def _env_name(key: tuple[str, ...]) -> str:
    return "CARGO_" + "_".join(k.upper().replace("-", "_").replace(".", "_") for k in key)


def checkout_config_args(
    workdir: Path, environment: Mapping[str, str], cargo_home: Path | None
) -> list[str]:
    """`--config KEY=VALUE` arguments carrying the data parts of the checkout's configuration.

    In cargo's order: files nearer the root first, included files before the file including
    them; later arguments take precedence and arrays add up, as between the files themselves.
    Keys set through the environment (CARGO_NET_OFFLINE, ...) are left to the environment.
    """
    arguments: list[str] = []
    for file in _config_files(workdir, cargo_home):
        for document, base in _load(file, ()):
            for leaf in allowed_leaves(document, base):
                if _env_name(leaf.key) in environment:
                    continue
                key = ".".join(tomlkit.key(part).as_string() for part in leaf.key)
                arguments += ["--config", f"{key}={tomlkit.item(leaf.value).as_string()}"]
                if len(arguments) > 2 * MAX_KEYS:
                    raise FeatcheckError(
                        f"more than {MAX_KEYS} cargo settings in the checkout's configuration",
                        path=file,
                    )
    return arguments


def default_cargo_home(environment: Mapping[str, str]) -> Path | None:
    """CARGO_HOME as cargo finds it (the environment, else ~/.cargo)."""
    home = environment.get("CARGO_HOME")
    if home:
        return Path(home)
    try:
        return Path.home() / ".cargo"
    except RuntimeError:
        return None
