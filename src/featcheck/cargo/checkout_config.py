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

import contextlib
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from featcheck.boundary import LeadsOut, read_checkout_file
from featcheck.cargo.argv_gate import (
    CFG,
    CONFIG_SETTING,
    FEATURE,
    PANIC,
    SWITCH,
    TARGET_CPU,
    TARGET_FEATURES,
    Argument,
    GateError,
    Grammar,
    option,
    word,
)
from featcheck.cargo.toolchain import neutral_directory
from featcheck.errors import FeatcheckError
from featcheck.fileio import MAX_CONFIG_BYTES

if TYPE_CHECKING:
    # Read before cargo starts, so loaded only where a configuration file exists.
    from featcheck.manifest.document import ManifestDocument
    from featcheck.manifest.spans import KeyPath
    from featcheck.semantics.cfg import TargetCfg

MAX_KEYS = 2000
"""More settings than this from the checkout is not a real project: refuse, not E2BIG."""
_MAX_INCLUDE_DEPTH = 16

_SOURCE_STRINGS = {"replace-with", "registry", "git", "branch", "tag", "rev"}
_SOURCE_PATHS = {"directory", "local-registry"}
_PATCH_STRINGS = {"git", "branch", "tag", "rev", "version", "package", "registry"}

KEPT_CODEGEN: dict[str, Grammar] = {
    "target-feature": TARGET_FEATURES,
    "target-cpu": TARGET_CPU,
    "panic": PANIC,
    "debug-assertions": SWITCH,
}
"""The `-C` options that change what `rustc --print cfg` prints (`target_feature`, `panic`,
`debug_assertions`), with the grammar of their values."""

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
        self.message = message


# A NamedTuple, not a dataclass: made before cargo starts (see audit.py).
class _Leaf(NamedTuple):
    key: tuple[str, ...]
    value: Any


def filter_rustflags(flags: list[str]) -> list[Argument]:
    """The flags that change which cfg values rustc reports, each as one `--flag=value`.

    Kept: `--cfg NAME` / `--cfg NAME="VALUE"` as `--cfg=...`, and `-C` target-feature,
    target-cpu, panic and debug-assertions as `-CKEY=VALUE`. Everything else is dropped: `-Z`
    flags load code (`-Zcodegen-backend`, `-Zllvm-plugins`), `-L`/`--sysroot`/`--extern` point
    rustc at files, `--print` writes them, and none of them changes features.

    Raises RustflagError (with the flag's index) for a kept flag whose value does not match
    its grammar, and for an argument file (`@FILE`) anywhere: rustc would read more flags from
    that file, which featcheck neither passes on nor can ignore (they may set cfg values).
    """
    kept: list[Argument] = []
    index = 0
    while index < len(flags):
        position = index
        flag = flags[index]
        index += 1
        if flag.startswith("@"):
            raise RustflagError(
                position,
                f"`{flag[:60]}` is a rustc argument file: featcheck does not pass it on (it may "
                "hold any rustc option) and cannot audit without the cfg values it may set",
            )
        value: str | None = None
        if flag in _TAKES_VALUE:  # `--cfg X`, `-C key=value`, `-L DIR`
            if index >= len(flags):
                break
            name, value = flag, flags[index]
            index += 1
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


def _error(document: ManifestDocument, path: KeyPath, message: str) -> FeatcheckError:
    """`message` at the line where `path` is written in the configuration file."""
    line = column = None
    with contextlib.suppress(ValueError):  # the span index gives up on some odd layouts
        while path:
            entry = document.spans.get(path)
            if entry is not None:
                span = entry.value or entry.key
                line, column = span.line, span.column
                break
            path = path[:-1]
    return FeatcheckError(message, path=document.path, line=line, column=column)


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
        raise _error(document, at, error.message) from None


def allowed_leaves(document: ManifestDocument, base: Path) -> Iterator[_Leaf]:
    """The allow-listed settings of one configuration file, paths made absolute from `base`.

    Raises FeatcheckError at the offending line for a value that would reach rustc's argument
    vector and does not match its grammar (rustflags, `[patch]` features).
    """
    data = document.data
    paths = data.get("paths")
    if isinstance(paths, list):
        absolute = [_absolute(p, base) for p in paths]
        if absolute and all(a is not None for a in absolute):
            yield _Leaf(("paths",), absolute)
    for name, table in _tables(data.get("source")):
        for key, value in table.items():
            if key in _SOURCE_STRINGS and isinstance(value, str):
                yield _Leaf(("source", name, key), value)
            elif key in _SOURCE_PATHS and (path := _absolute(value, base)) is not None:
                yield _Leaf(("source", name, key), path)
    for name, table in _tables(data.get("registries")):
        if isinstance(table.get("index"), str):
            yield _Leaf(("registries", name, "index"), table["index"])
        if name == "crates-io" and isinstance(table.get("protocol"), str):
            yield _Leaf(("registries", name, "protocol"), table["protocol"])
    for source, crates in _tables(data.get("patch")):
        for crate, spec in _tables(crates):
            for key, value in spec.items():
                where = ("patch", source, crate, key)
                if key in _PATCH_STRINGS and isinstance(value, str):
                    yield _Leaf(where, value)
                elif key == "path" and (path := _absolute(value, base)) is not None:
                    yield _Leaf(where, path)
                elif key == "default-features" and isinstance(value, bool):
                    yield _Leaf(where, value)
                elif key == "features" and isinstance(value, list):
                    for index, feature in enumerate(value):
                        try:
                            FEATURE.check(feature)
                        except GateError as error:
                            raise _error(document, (*where, index), str(error)) from None
                    yield _Leaf(where, value)
    net = data.get("net")
    if isinstance(net, dict):
        if isinstance(net.get("offline"), bool):
            yield _Leaf(("net", "offline"), net["offline"])
        if isinstance(net.get("retry"), int) and not isinstance(net.get("retry"), bool):
            yield _Leaf(("net", "retry"), net["retry"])
    resolver = data.get("resolver")
    if isinstance(resolver, dict) and isinstance(resolver.get("incompatible-rust-versions"), str):
        yield _Leaf(
            ("resolver", "incompatible-rust-versions"), resolver["incompatible-rust-versions"]
        )
    build = data.get("build")
    if isinstance(build, dict):
        flags: tuple[str, ...] = ("build", "rustflags")
        if (kept := _rustflags(document, flags, build.get("rustflags"))) is not None:
            yield _Leaf(flags, kept)
    # `[target.<triple>]` and `[target.'cfg(...)']`: the table name stays a TOML key.
    for target, table in _tables(data.get("target")):
        flags = ("target", target, "rustflags")
        if (kept := _rustflags(document, flags, table.get("rustflags"))) is not None:
            yield _Leaf(flags, kept)


_NOT_SHOWN = "its text is not shown: it lies outside the project that includes it"


def _within(path: Path, inside: Path) -> bool:
    try:
        return path.resolve().is_relative_to(inside.resolve())
    except (OSError, RuntimeError):
        return False


def _read(path: Path, within: bool, root: Path | None) -> ManifestDocument:
    """A configuration file as a document. A file outside the project (reached by `include`)
    is never quoted in an error: it may be any file of the machine. One that a link inside
    the checkout (`root`) leads to outside it is not read at all (boundary.py)."""
    from featcheck.manifest.document import parse_document

    try:
        raw = read_checkout_file(path, "cargo configuration file", MAX_CONFIG_BYTES, root)
        return parse_document(path, raw)
    except FeatcheckError as error:
        if within or isinstance(error, LeadsOut):
            raise
        raise FeatcheckError(
            f"cannot be read as a cargo configuration file ({_NOT_SHOWN})", path=path
        ) from None


def _includes(document: ManifestDocument) -> Iterator[tuple[Path, bool]]:
    """The files `include` names (relative to the including file), as cargo resolves them:
    each must be a `.toml` file; `{ path = "...", optional = true }` may be missing."""
    entries = document.data.get("include")
    if isinstance(entries, str):
        entries = [entries]
    if not isinstance(entries, list):
        return
    for index, entry in enumerate(entries):
        optional = False
        if isinstance(entry, dict):
            optional = entry.get("optional") is True
            entry = entry.get("path")
        if not isinstance(entry, str):
            continue
        if not entry.endswith(".toml"):
            raise _error(
                document,
                ("include", index),
                f"cargo includes only `.toml` files, not `{entry[:60]}`",
            )
        yield document.path.parent / entry, optional


def _load(
    path: Path, seen: tuple[Path, ...], inside: Path, root: Path | None
) -> Iterator[tuple[ManifestDocument, Path, bool]]:
    """One configuration file and what it includes, lowest precedence first, each with
    whether it lies inside the project (`inside`)."""
    if len(seen) > _MAX_INCLUDE_DEPTH or path in seen:
        raise FeatcheckError("cargo configuration includes itself", path=path)
    within = _within(path, inside)
    document = _read(path, within, root)
    try:
        includes = list(_includes(document))
    except FeatcheckError:
        if within:
            raise
        raise FeatcheckError(f"`include` refused ({_NOT_SHOWN})", path=path) from None
    for included, optional in includes:
        if optional and not included.exists():
            continue
        yield from _load(included, (*seen, path), inside, root)
    yield document, path.parent.parent, within


def _config_files(
    workdir: Path, cargo_home: Path | None, untrusted_home: Path | None = None
) -> list[Path]:
    """The files cargo would read from `workdir` upward, lowest precedence (root) first, after
    the configuration of an untrusted CARGO_HOME (lowest of all, as cargo reads its home)."""
    found = _config_in(workdir, cargo_home)
    if untrusted_home is not None:
        for name in ("config", "config.toml"):  # cargo prefers `config` when both exist
            file = untrusted_home / name
            if file.is_file():
                if not any(file.samefile(f) for f in found if f.exists()):
                    found.insert(0, file)
                break
    return found


def _config_in(workdir: Path, cargo_home: Path | None) -> list[Path]:
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


# A NamedTuple, not a dataclass: made before cargo starts (see audit.py).
class CheckoutConfig(NamedTuple):
    """What featcheck takes from the checkout's cargo configuration."""

    arguments: tuple[Argument, ...] = ()
    """`--config=KEY=VALUE` arguments for cargo."""
    build_rustflags: tuple[Argument, ...] = ()
    """The kept `[build] rustflags`, all files together."""
    target_rustflags: tuple[tuple[str, tuple[Argument, ...]], ...] = ()
    """(`[target.X]` name, its kept rustflags), a triple or a `cfg(...)`, in reading order."""
    environment_target_rustflags: tuple[tuple[str, tuple[Argument, ...]], ...] = ()
    """(CARGO_TARGET_<TRIPLE>_RUSTFLAGS, its kept flags): added to that triple's table."""
    names_wrapper: bool = False
    """Whether a file cargo reads when run from the neutral directory (its own
    `/.cargo/config.toml`, CARGO_HOME's, or one they include) names a rustc wrapper; a CARGO_HOME
    file featcheck cannot read counts as naming one."""

    def rustflags(self, triple: str, cfg: TargetCfg) -> list[Argument]:
        """The kept rustflags cargo uses for `triple` (whose cfg without flags is `cfg`): those
        of `[target.<triple>]` (the files', then the environment's), then of every matching
        `[target.'cfg(...)']` table, or, when none sets a flag, `[build]`'s."""
        matched = False
        flags: list[Argument] = []
        for name, kept in self.target_rustflags:
            if name == triple:
                matched = True
                flags += kept
        variable = _env_name(("target", triple, "rustflags"))
        for name, kept in self.environment_target_rustflags:
            if name == variable:
                matched = True
                flags += kept
        for name, kept in self.target_rustflags:
            try:
                applies = name.startswith("cfg(") and cfg.applies(name)
            except ValueError:  # cargo refuses such a table; `cargo metadata` says so
                applies = False
            if applies:
                matched = True
                flags += kept
        return flags if matched else list(self.build_rustflags)


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped, so that the
    setting stays one line whatever the checkout wrote."""
    escaped = []
    for character in text:
        if character in ('"', "\\"):
            escaped.append("\\" + character)
        elif ord(character) < 0x20 or ord(character) == 0x7F:
            escaped.append(f"\\u{ord(character):04X}")
        else:
            escaped.append(character)
    return '"' + "".join(escaped) + '"'


def _toml_key(part: str) -> str:
    return part if _BARE_KEY.fullmatch(part) else _toml_string(part)


def _toml_value(value: object) -> str:
    """An allow-listed value (string, boolean, integer, array of strings) as TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def read_checkout_config(
    workdir: Path,
    environment: Mapping[str, str],
    cargo_home: Path | None,
    *,
    offline: bool = False,
    untrusted_home: Path | None = None,
    root: Path | None = None,
) -> CheckoutConfig:
    """The data parts of the checkout's configuration, checked by the argument gate.

    In cargo's order: files nearer the root first, included files before the file including
    them; later arguments take precedence and arrays add up, as between the files themselves.
    A key set through the environment (CARGO_NET_OFFLINE, ...) is left to it, but for the
    rustflags lists, to which cargo adds the environment's (CARGO_BUILD_RUSTFLAGS and
    CARGO_TARGET_<TRIPLE>_RUSTFLAGS, which cargo reads itself; featcheck reads them too for
    the cfg it evaluates). `root`: the checkout, out of which no link is followed.

    Where cargo sends credentials is never the checkout's to say (see `_CredentialPolicy`):
    unless cargo stays offline (`offline`), a registry or remote source defined only by the
    checkout is refused. `untrusted_home` is a CARGO_HOME that lies inside the checkout: its
    configuration is read as the checkout's, at the lowest precedence, as cargo would.
    """
    arguments: list[Argument] = []
    build_on_command_line = False
    user = _user_configuration(cargo_home, environment)
    build, targets, names_wrapper = user.build, user.targets, user.names_wrapper
    policy = _CredentialPolicy(user.registries)
    for file in _config_files(workdir, cargo_home, untrusted_home):
        for document, base, within in _load(file, (), file.parent.parent, root):
            if file.parent.parent == neutral_directory():  # cargo reads it there too
                names_wrapper = names_wrapper or _names_wrapper(document)
            try:
                leaves = list(allowed_leaves(document, base))
            except FeatcheckError:
                if within:
                    raise
                raise FeatcheckError(
                    f"holds a value featcheck refuses ({_NOT_SHOWN})", path=document.path
                ) from None
            for leaf in leaves:
                if _left_to_environment(leaf.key, environment) or not policy.admits(leaf, document):
                    continue
                key = ".".join(_toml_key(part) for part in leaf.key)
                setting = f"{key}={_toml_value(leaf.value or _NEUTRAL_FLAGS)}"
                arguments.append(option("--config", setting, CONFIG_SETTING))
                if len(arguments) > MAX_KEYS:
                    raise FeatcheckError(
                        f"more than {MAX_KEYS} cargo settings in the checkout's configuration",
                        path=file,
                    )
                if leaf.key == ("build", "rustflags"):
                    build += leaf.value
                    build_on_command_line = True
                elif leaf.key[0] == "target":
                    targets.append((leaf.key[1], tuple(leaf.value)))
    if (from_environment := _environment_list(environment, "CARGO_BUILD_RUSTFLAGS")) is not None:
        build += from_environment
        if build_on_command_line:
            # cargo puts `--config` lists after the environment's, files before it: the
            # environment's flags again, last, keep the checkout's order where flags conflict.
            setting = f"build.rustflags={_toml_value(from_environment or _NEUTRAL_FLAGS)}"
            arguments.append(option("--config", setting, CONFIG_SETTING))
    if not (offline or _stays_offline(arguments, environment)):
        policy.refuse_remote_definitions()
    by_triple = tuple(
        (name, tuple(flags))
        for name in sorted(environment)
        if name.startswith("CARGO_TARGET_") and name.endswith("_RUSTFLAGS")
        if (flags := _environment_list(environment, name)) is not None
    )
    return CheckoutConfig(tuple(arguments), tuple(build), tuple(targets), by_triple, names_wrapper)


def _names_wrapper(document: ManifestDocument) -> bool:
    build = document.data.get("build")
    return isinstance(build, dict) and any(
        key in build for key in ("rustc-wrapper", "rustc-workspace-wrapper")
    )


# A rustflags list whose flags featcheck drops all (`-C link-arg=...`) still replaces `[build]`'s
# for its target in cargo, where an empty list would not: cargo gets this flag in its place,
# which changes no cfg value (featcheck's cargo never compiles).
_NEUTRAL_FLAGS = ["-Ccodegen-units=1"]


def _left_to_environment(key: tuple[str, ...], environment: Mapping[str, str]) -> bool:
    """Whether cargo takes this setting from the environment alone: a scalar set there is
    replaced, a rustflags list gets the environment's flags added (measured with cargo)."""
    return key[-1] != "rustflags" and _env_name(key) in environment


def _environment_list(environment: Mapping[str, str], name: str) -> list[Argument] | None:
    """The kept flags of a rustflags list set through the environment (split at whitespace,
    as cargo splits it); None when unset or empty."""
    flags = environment.get(name, "").split()
    if not flags:
        return None
    try:
        return filter_rustflags(flags)
    except RustflagError as error:
        raise FeatcheckError(f"{name}: {error.message}") from None


class _UserConfiguration(NamedTuple):
    """What featcheck needs to know of the user's own CARGO_HOME configuration."""

    build: list[Argument]
    targets: list[tuple[str, tuple[Argument, ...]]]
    names_wrapper: bool
    registries: frozenset[str]
    """The registries the user defines (there or as CARGO_REGISTRIES_<NAME>_INDEX), as
    cargo's environment names them (upper case, `_` for `-`)."""


def _user_configuration(
    cargo_home: Path | None, environment: Mapping[str, str]
) -> _UserConfiguration:
    """The kept rustflags of the user's own CARGO_HOME configuration, which cargo reads first
    (lowest precedence), whether it names a rustc wrapper, and the registries it defines. cargo
    reads that file itself, so nothing else of it is needed, and a file featcheck cannot take
    (an argument file in it, say) just adds no flags (and may name a wrapper)."""
    build: list[Argument] = []
    targets: list[tuple[str, tuple[Argument, ...]]] = []
    names_wrapper = False
    registries = {
        name[len("CARGO_REGISTRIES_") : -len("_INDEX")]
        for name in environment
        if name.startswith("CARGO_REGISTRIES_") and name.endswith("_INDEX")
    }
    files = [cargo_home / name for name in ("config", "config.toml")] if cargo_home else []
    for file in files:  # cargo prefers `config` when both exist
        if not file.is_file():
            continue
        try:
            for document, base, _ in _load(file, (), file.parent, None):  # the user's own
                names_wrapper = names_wrapper or _names_wrapper(document)
                defined = _tables(document.data.get("registries"))
                registries.update(_registry_key(name) for name, _ in defined)
                for leaf in allowed_leaves(document, base):
                    if _left_to_environment(leaf.key, environment):
                        continue
                    if leaf.key == ("build", "rustflags"):
                        build += leaf.value
                    elif leaf.key[0] == "target":
                        targets.append((leaf.key[1], tuple(leaf.value)))
        except FeatcheckError:
            return _UserConfiguration([], [], True, frozenset(registries))
        break
    return _UserConfiguration(build, targets, names_wrapper, frozenset(registries))


def _registry_key(name: str) -> str:
    return name.upper().replace("-", "_")


class _CredentialPolicy:
    """Where cargo may send credentials is the user's to say, never the checkout's.

    cargo finds a registry's token by the registry's *name* (CARGO_REGISTRIES_<NAME>_TOKEN,
    credentials.toml, a credential provider), and `--config` beats the user's own definition
    of that name: a checkout's `[registries.NAME] index` would make cargo send the user's token
    for NAME to the checkout's host, and a checkout's remote `[source.NAME] registry` (one that
    nothing replaces) would make cargo fetch from, and authenticate to, a host it names. So:
    a registry the user defines keeps the user's definition (the checkout's is dropped); one
    only the checkout defines, and a remote source of the checkout that nothing replaces, are
    refused unless cargo stays offline. Local sources (`directory`, `local-registry`: what
    `cargo vendor` writes) and `replace-with` pass; credential providers never do.
    """

    def __init__(self, user_registries: frozenset[str]) -> None:
        self._user = user_registries
        self._refused: list[FeatcheckError] = []
        self._remote_sources: dict[str, FeatcheckError] = {}
        self._replaced: set[str] = set()

    def admits(self, leaf: _Leaf, document: ManifestDocument) -> bool:
        """Whether `leaf` goes to cargo (a refusal is kept for `refuse_remote_definitions`)."""
        section = leaf.key[0]
        if section == "registries":
            name = leaf.key[1]
            if _registry_key(name) in self._user or name == "crates-io":
                return name == "crates-io"  # the user's definition stands
            self._refused.append(
                _error(
                    document,
                    leaf.key,
                    f"`[registries.{_printable(name)}]` is defined by the checkout: featcheck "
                    "lets only your own cargo configuration say where cargo sends a registry's "
                    "credentials; define it in $CARGO_HOME/config.toml (or CARGO_REGISTRIES_"
                    f"{_registry_key(_printable(name))}_INDEX), audit with --offline, "
                    "or pass --trust-checkout",
                )
            )
        elif section == "source" and leaf.key[2] == "replace-with":
            self._replaced.add(leaf.key[1])
        elif section == "source" and leaf.key[2] == "registry":
            self._remote_sources.setdefault(
                leaf.key[1],
                _error(
                    document,
                    leaf.key,
                    f"`[source.{_printable(leaf.key[1])}]` in the checkout names a remote "
                    "registry that cargo would fetch from and send credentials to: featcheck "
                    "takes remote sources only from your own cargo configuration; define it "
                    "there, audit with --offline, or pass --trust-checkout",
                ),
            )
        return True

    def refuse_remote_definitions(self) -> None:
        """Raise the first refusal: cargo would go on the network."""
        refused = self._refused + [
            error for name, error in self._remote_sources.items() if name not in self._replaced
        ]
        if refused:
            raise refused[0]


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text[:60])


def _stays_offline(arguments: list[Argument], environment: Mapping[str, str]) -> bool:
    """Whether cargo runs offline whatever featcheck passes: CARGO_NET_OFFLINE, else the
    forwarded `net.offline = true` (a checkout that sets it keeps cargo off the network)."""
    value = environment.get("CARGO_NET_OFFLINE")
    if value is not None:
        return value.strip().lower() in ("true", "1")
    return "--config=net.offline=true" in arguments


def checkout_config_args(
    workdir: Path, environment: Mapping[str, str], cargo_home: Path | None
) -> list[Argument]:
    """`--config=KEY=VALUE` arguments carrying the data parts of the checkout's configuration."""
    return list(read_checkout_config(workdir, environment, cargo_home).arguments)


def environment_rustflags(environment: Mapping[str, str]) -> list[Argument] | None:
    """The kept flags of CARGO_ENCODED_RUSTFLAGS or RUSTFLAGS, which replace every configured
    rustflag in cargo; None when neither is set."""
    encoded = environment.get("CARGO_ENCODED_RUSTFLAGS")
    if encoded is not None:
        flags, name = (encoded.split("\x1f") if encoded else []), "CARGO_ENCODED_RUSTFLAGS"
    elif "RUSTFLAGS" in environment:
        flags, name = environment["RUSTFLAGS"].split(), "RUSTFLAGS"
    else:
        return None
    try:
        return filter_rustflags(flags)
    except RustflagError as error:
        raise FeatcheckError(f"{name}: {error.message}") from None


def filter_environment_rustflags(environment: dict[str, str]) -> None:
    """Put the environment's rustflags through the same allow-list as the configuration's, in
    place: CI often exports them from checkout content, and cargo passes them to the `rustc`
    it runs for its target probe (`-Zcodegen-backend=LIB` loads a library). Each variable keeps
    its meaning: RUSTFLAGS and CARGO_ENCODED_RUSTFLAGS still replace every configured flag, a
    `CARGO_TARGET_<TRIPLE>_RUSTFLAGS` whose flags are all dropped still replaces `[build]`'s.
    Raises FeatcheckError for an argument file or a kept flag of the wrong form."""
    if (encoded := environment_rustflags(environment)) is not None:
        environment.pop("RUSTFLAGS", None)
        environment["CARGO_ENCODED_RUSTFLAGS"] = "\x1f".join(encoded)
    for name in [n for n in environment if n.startswith("CARGO_") and n.endswith("_RUSTFLAGS")]:
        if name == "CARGO_ENCODED_RUSTFLAGS":
            continue
        kept = _environment_list(environment, name)
        if name == "CARGO_BUILD_RUSTFLAGS" or not name.startswith("CARGO_TARGET_"):
            if kept:
                environment[name] = " ".join(kept)
            else:
                environment.pop(name)  # cargo adds it to the files' flags: nothing to add
        elif kept is not None:
            environment[name] = " ".join(kept or _NEUTRAL_FLAGS)


def configuration_documents(
    workdir: Path, cargo_home: Path | None, untrusted_home: Path | None, root: Path
) -> Iterator[tuple[ManifestDocument, Path, Path]]:
    """Every configuration file cargo reads when run in `workdir`, with what each includes,
    lowest precedence first: the (trusted) CARGO_HOME's own file, then the files from the
    root down to `workdir` (after an untrusted home's, see `_config_files`). Each comes with
    the directory its relative paths start from and the file that was read (or included it).
    No file is read through a link out of the checkout `root` (the user's own home aside)."""
    files = [cargo_home / name for name in ("config", "config.toml")] if cargo_home else []
    home = next((f for f in files if f.is_file()), None)  # cargo prefers `config`
    if home is not None:
        for document, base, _ in _load(home, (), home.parent.parent, None):
            yield document, base, home
    for file in _config_files(workdir, cargo_home, untrusted_home):
        for document, base, _ in _load(file, (), file.parent.parent, root):
            yield document, base, file


def setting_error(document: ManifestDocument, path: KeyPath, message: str) -> FeatcheckError:
    """`message` at the line where `path` is written in a configuration file."""
    return _error(document, path, message)
