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

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from featcheck.cargo.argv_gate import (
    CONFIG_SETTING,
    NEUTRAL_FLAGS,
    Argument,
    GateError,
    environment_list,
    option,
)
from featcheck.cargo.config_files import (
    Leaf,
    allowed_leaves,
    config_files,
    home_config,
    load,
    setting_error,
    tables,
    unquoted_outside,
)
from featcheck.cargo.pending_metadata import MODE_KEY, UNSTABLE_KEY, UnificationSettings
from featcheck.cargo.process import NEUTRAL_DIRECTORY
from featcheck.errors import FeatcheckError
from featcheck.manifest.spans import BARE_KEY

if TYPE_CHECKING:
    from featcheck.manifest.document import ManifestDocument
    from featcheck.semantics.cfg import TargetCfg

MAX_KEYS = 2000
"""More settings than this from the checkout is not a real project: refuse, not E2BIG."""


def _env_name(key: tuple[str, ...]) -> str:
    return "CARGO_" + "_".join(k.upper().replace("-", "_").replace(".", "_") for k in key)


class CheckoutConfig(NamedTuple):
    arguments: tuple[Argument, ...] = ()
    """`--config=KEY=VALUE` arguments for cargo."""
    build_rustflags: tuple[Argument, ...] = ()
    """The kept `[build] rustflags`, all files together."""
    target_rustflags: tuple[tuple[str, tuple[Argument, ...]], ...] = ()
    """(`[target.X]` name, its kept rustflags), a triple or a `cfg(...)`, in reading order."""
    environment_target_rustflags: tuple[tuple[str, tuple[Argument, ...]], ...] = ()
    """(CARGO_TARGET_<TRIPLE>_RUSTFLAGS, its kept flags): added to that triple's table."""
    names_wrapper: bool = False
    """A file cargo reads itself (from the neutral directory, CARGO_HOME) names a rustc wrapper."""
    unification: UnificationSettings = UnificationSettings()
    """`resolver.feature-unification` and its unstable flag, as the files set them."""
    build_targets: tuple[str, ...] = ()
    """`build.target` (CARGO_BUILD_TARGET first): what cargo builds for without `--target`."""
    patch_paths: tuple[tuple[str, str], ...] = ()
    """(package, directory) of each `[patch.SOURCE.CRATE] path`: `--no-exec` reads them."""

    def rustflags(self, triple: str, cfg: TargetCfg) -> list[Argument]:
        """The kept rustflags cargo uses for `triple` (whose cfg without flags is `cfg`): those
        of `[target.<triple>]` (the files', then the environment's), then of every matching
        `[target.'cfg(...)']` table, or, when none sets a flag, `[build]`'s."""
        variable = _env_name(("target", triple, "rustflags"))
        matched = [kept for name, kept in self.target_rustflags if name == triple]
        matched += [kept for name, kept in self.environment_target_rustflags if name == variable]
        matched += [kept for name, kept in self.target_rustflags if _applies(name, cfg)]
        if not matched:
            return list(self.build_rustflags)
        return [flag for kept in matched for flag in kept]


def _applies(table: str, cfg: TargetCfg) -> bool:
    try:
        return table.startswith("cfg(") and cfg.applies(table)
    except ValueError:  # cargo refuses such a table; `cargo metadata` says so
        return False


def _toml_value(value: object) -> str:
    """An allow-listed value (string, boolean, integer, array of strings) as one line of TOML,
    whatever the checkout wrote: JSON's forms and escapes are TOML's but for DEL (JSON keeps it)."""
    if not isinstance(value, (bool, int, str, list, tuple)):
        raise TypeError(f"no TOML form for {type(value).__name__}")
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007F")


def read_checkout_config(
    workdir: Path,
    environment: Mapping[str, str],
    cargo_home: Path | None,
    *,
    offline: bool = False,
    untrusted_home: Path | None = None,
    root: Path | None = None,
) -> CheckoutConfig:
    """In cargo's order: files nearer the root first, included files before the file including
    them; later arguments take precedence and arrays add up, as between the files themselves.
    A key set through the environment (CARGO_NET_OFFLINE, ...) is left to it, but for the
    rustflags lists, to which cargo adds the environment's (CARGO_BUILD_RUSTFLAGS and
    CARGO_TARGET_<TRIPLE>_RUSTFLAGS, which cargo reads itself; featcheck reads them too for
    the cfg it evaluates). `root`: the checkout, out of which no link is followed.

    Unless cargo stays offline (`offline`), a registry or remote source defined only by the
    checkout is refused (see `CredentialPolicy`). `untrusted_home` is a CARGO_HOME that lies
    inside the checkout: its configuration is read as the checkout's, at the lowest
    precedence, as cargo would."""
    forwarded = _user_configuration(cargo_home, environment)
    policy = CredentialPolicy(forwarded.registries)
    for file in config_files(workdir, cargo_home, untrusted_home):
        for document, base, within in load(file, file.parent.parent, root):
            if file.parent.parent == NEUTRAL_DIRECTORY:  # cargo reads it there too
                forwarded.names_wrapper |= _names_wrapper(document)
            with unquoted_outside(within, document.path, "holds a value featcheck refuses"):
                leaves = list(allowed_leaves(document, base))
            for leaf in leaves:
                if not _left_to_environment(leaf.key, environment) and policy.admits(
                    leaf, document
                ):
                    forwarded.add(leaf, file, document, within)
    if (from_environment := environment_list(environment, "CARGO_BUILD_RUSTFLAGS")) is not None:
        forwarded.build += from_environment
        if forwarded.build_on_command_line:
            # cargo puts `--config` lists after the environment's, files before it: the
            # environment's flags again, last, keep the checkout's order where flags conflict.
            forwarded.arguments.append(_config_argument(("build", "rustflags"), from_environment))
    if not (offline or _stays_offline(forwarded.arguments, environment)):
        policy.refuse_remote_definitions()
    return CheckoutConfig(
        tuple(forwarded.arguments),
        tuple(forwarded.build),
        tuple(forwarded.targets),
        tuple(
            (name, tuple(flags))
            for name in sorted(environment)
            if name.startswith("CARGO_TARGET_") and name.endswith("_RUSTFLAGS")
            if (flags := environment_list(environment, name)) is not None
        ),
        forwarded.names_wrapper,
        forwarded.unification,
        (environment["CARGO_BUILD_TARGET"],)
        if environment.get("CARGO_BUILD_TARGET")
        else tuple(forwarded.build_targets),
        forwarded.patch_paths(),
    )


class _Forwarded:
    """The settings `read_checkout_config` passes to cargo, and what featcheck reads of them
    itself (rustflags, feature unification), the user's own configuration's first."""

    def __init__(self) -> None:
        self.arguments: list[Argument] = []
        self.build: list[Argument] = []
        self.targets: list[tuple[str, tuple[Argument, ...]]] = []
        self.build_on_command_line = False
        self.unification = UnificationSettings()
        self.names_wrapper = False
        self.build_targets: list[str] = []
        self.patches: dict[str, dict[str, str]] = {}
        """By crate, the `path` and `package` of its `[patch]` entries that name a path."""
        self.registries: frozenset[str] = frozenset()
        """The registries the user defines (CARGO_HOME, environment), named by `registry_key`."""

    def add(self, leaf: Leaf, file: Path, document: ManifestDocument, within: bool) -> None:
        """Pass `leaf` (read from `file`, or a file it includes) to cargo. A setting cargo's
        command line cannot carry (a `cfg(...)` key longer than any value the gate passes, say)
        is one line at its place in `document`."""
        if leaf.key == ("build", "target"):  # featcheck's to read: it names every target
            self.take(leaf, file)
            return
        refusal = "holds a setting featcheck cannot pass to cargo"
        with unquoted_outside(within, document.path, refusal):
            try:
                self.arguments.append(_config_argument(leaf.key, leaf.value))
            except GateError as error:
                message = f"featcheck cannot pass this setting to cargo: {error}"
                raise setting_error(document, leaf.key, message) from None
        if len(self.arguments) > MAX_KEYS:
            raise FeatcheckError(
                f"more than {MAX_KEYS} cargo settings in the checkout's configuration", path=file
            )
        self.build_on_command_line |= leaf.key == ("build", "rustflags")
        self.take(leaf, file)

    def patch_paths(self) -> tuple[tuple[str, str], ...]:
        """(package, directory) of each `[patch]` entry that names a path."""
        patches = self.patches.items()
        return tuple((p.get("package", crate), p["path"]) for crate, p in patches if "path" in p)

    def take(self, leaf: Leaf, file: Path) -> None:
        if leaf.key == MODE_KEY and isinstance(leaf.value, str):
            self.unification = self.unification._replace(mode=(leaf.value, file))
        elif leaf.key == UNSTABLE_KEY and isinstance(leaf.value, bool):
            self.unification = self.unification._replace(unstable=(leaf.value, file))
        elif leaf.key == ("build", "rustflags"):
            self.build += leaf.value
        elif leaf.key == ("build", "target"):  # the nearest file's
            self.build_targets = list(leaf.value)
        elif leaf.key[0] == "target":
            self.targets.append((leaf.key[1], tuple(leaf.value)))
        elif leaf.key[0] == "patch" and leaf.key[3] in ("path", "package"):
            self.patches.setdefault(leaf.key[2], {})[leaf.key[3]] = str(leaf.value)


def _config_argument(key: tuple[str, ...], value: object) -> Argument:
    """`--config=KEY=VALUE`, the value written as TOML. Rustflags the gate emptied become the
    neutral flags; any other value, `false` and `0` among them, is passed as it is."""
    if key[-1] == "rustflags" and not value:
        value = NEUTRAL_FLAGS
    keys = (part if BARE_KEY.fullmatch(part) else _toml_value(part) for part in key)
    setting = ".".join(keys) + "=" + _toml_value(value)
    return option("--config", setting, CONFIG_SETTING)


def _names_wrapper(document: ManifestDocument) -> bool:
    build = document.data.get("build")
    return isinstance(build, dict) and any(
        key in build for key in ("rustc-wrapper", "rustc-workspace-wrapper")
    )


def _left_to_environment(key: tuple[str, ...], environment: Mapping[str, str]) -> bool:
    """Whether cargo takes this setting from the environment alone: a scalar set there is
    replaced, a rustflags list gets the environment's flags added (measured with cargo)."""
    return key[-1] != "rustflags" and _env_name(key) in environment


def _user_configuration(cargo_home: Path | None, environment: Mapping[str, str]) -> _Forwarded:
    """What featcheck reads of the user's own CARGO_HOME configuration, which cargo reads first
    (lowest precedence): its rustflags and feature unification (no argument: cargo reads the file
    itself), whether it names a rustc wrapper, and the registries it defines. A file featcheck
    cannot take (holding an argument file, say) adds no flags and may name a wrapper."""
    kept = _Forwarded()
    registries = {
        name[len("CARGO_REGISTRIES_") : -len("_INDEX")]
        for name in environment
        if name.startswith("CARGO_REGISTRIES_") and name.endswith("_INDEX")
    }
    try:
        if (file := home_config(cargo_home)) is not None:
            for document, base, _ in load(file, file.parent, None):  # the user's own
                kept.names_wrapper |= _names_wrapper(document)
                defined = tables(document.data.get("registries"))
                registries.update(registry_key(name) for name, _ in defined)
                for leaf in allowed_leaves(document, base):
                    if not _left_to_environment(leaf.key, environment):
                        kept.take(leaf, file)
    except FeatcheckError:
        kept = _Forwarded()
        kept.names_wrapper = True
    kept.registries = frozenset(registries)
    return kept


def _stays_offline(arguments: list[Argument], environment: Mapping[str, str]) -> bool:
    """Whether cargo runs offline whatever featcheck passes: CARGO_NET_OFFLINE, else the
    forwarded `net.offline = true` (a checkout that sets it keeps cargo off the network)."""
    if (value := environment.get("CARGO_NET_OFFLINE")) is not None:
        return value.strip().lower() in ("true", "1")
    return "--config=net.offline=true" in arguments


def registry_key(name: str) -> str:
    return name.upper().replace("-", "_")


_NOT_THE_PROBE = " (not the probe: it builds and runs what it fetches)"


class CredentialPolicy:
    """Where cargo may send credentials is the user's to say, never the checkout's.

    cargo finds a registry's token by the registry's *name* (CARGO_REGISTRIES_<NAME>_TOKEN,
    credentials.toml, a credential provider), and `--config` beats the user's own definition
    of that name: a checkout's `[registries.NAME] index` would make cargo send the user's token
    for NAME to the checkout's host, and a checkout's remote `[source.NAME] registry` (one that
    nothing replaces) would make cargo fetch from, and authenticate to, a host it names. So:
    a registry the user defines keeps the user's definition (the checkout's is dropped); one
    only the checkout defines, and a remote source of the checkout that nothing replaces, are
    refused unless cargo stays offline. Local sources (`directory`, `local-registry`: what
    `cargo vendor` writes) and `replace-with` pass; credential providers never do."""

    def __init__(self, user_registries: frozenset[str]) -> None:
        self._user = user_registries
        self._refused: list[FeatcheckError] = []
        self._remote_sources: dict[str, FeatcheckError] = {}
        self._replaced: set[str] = set()

    def admits(self, leaf: Leaf, document: ManifestDocument) -> bool:
        """Whether `leaf` goes to cargo (a refusal is kept for `refuse_remote_definitions`)."""
        section = leaf.key[0]
        if section == "registries":
            name = leaf.key[1]
            if registry_key(name) in self._user or name == "crates-io":
                return name == "crates-io"  # the user's definition stands
            self._refused.append(
                setting_error(
                    document,
                    leaf.key,
                    f"`[registries.{_printable(name)}]` is defined by the checkout: featcheck "
                    "lets only your own cargo configuration say where cargo sends a registry's "
                    "credentials; define it in $CARGO_HOME/config.toml (or CARGO_REGISTRIES_"
                    f"{registry_key(_printable(name))}_INDEX) or pass --trust-checkout; "
                    f"an audit also takes it with --offline{_NOT_THE_PROBE}",
                )
            )
        elif section == "source" and leaf.key[2] == "replace-with":
            self._replaced.add(leaf.key[1])
        elif section == "source" and leaf.key[2] == "registry":
            self._remote_sources.setdefault(
                leaf.key[1],
                setting_error(
                    document,
                    leaf.key,
                    f"`[source.{_printable(leaf.key[1])}]` in the checkout names a remote "
                    "registry that cargo would fetch from and send credentials to: featcheck "
                    "takes remote sources only from your own cargo configuration; define it "
                    "there or pass --trust-checkout; an audit also takes it with "
                    f"--offline{_NOT_THE_PROBE}",
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
