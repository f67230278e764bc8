"""How every cargo and rustc command of an audit runs: binaries, environment, working directory.

By default nothing the checkout supplies is run: the real binaries of the user's toolchain
(toolchain.py), from a neutral directory with only the data parts of the checkout's
configuration (checkout_config.py), an environment that names the compiler and disables
wrappers. A trusted checkout gets plain `cargo` in the checkout.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from featcheck.boundary import TrustContext, default_home
from featcheck.cargo.argv_gate import (
    CONFIG_SETTING,
    Argument,
    environment_rustflags,
    filter_environment_rustflags,
    option,
)
from featcheck.cargo.checkout_config import CheckoutConfig, read_checkout_config
from featcheck.cargo.process import NEUTRAL_DIRECTORY
from featcheck.cargo.toolchain import Toolchain, resolve_toolchain
from featcheck.errors import FeatcheckError
from featcheck.fileio import read_cache, write_cache

WRAPPER_VARIABLES = (
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_BUILD_RUSTC_WRAPPER",
    "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER",
)
"""Where cargo finds a rustc wrapper in the environment; featcheck's cargo runs none."""


NO_BUILD_DIRECTORY = "/dev/null/featcheck-keeps-nothing"
"""A target directory that can never be created: where featcheck has no cache it can trust,
cargo keeps no rustc answer at all, rather than read one kept in the checkout's target/."""


class CommandSetup(NamedTuple):
    toolchain: Toolchain | None
    environment: dict[str, str]
    cwd: Path
    config: CheckoutConfig
    """The data parts of the checkout's cargo configuration (`--config=` arguments, rustflags)."""
    environment_rustflags: list[Argument] | None  # argv_gate.environment_rustflags
    cache: Path | None = None
    """featcheck's cache directory, where the checkout cannot have written it (else None)."""


def _plain_environment() -> dict[str, str]:
    # Plain, stable text: no colours or progress bars in what featcheck parses.
    return {**os.environ, "CARGO_TERM_COLOR": "never", "CARGO_TERM_PROGRESS_WHEN": "never"}


def trusted_setup(workdir: Path, trust: TrustContext) -> CommandSetup:
    """`cargo`/`rustc` from PATH in the checkout, obeying its toolchain and configuration."""
    env = _plain_environment()
    # cargo reads the configuration itself; featcheck reads its rustflags only to
    # evaluate cfg as cargo will, and does without them where it cannot read them.
    try:
        config = read_checkout_config(
            workdir, env, default_home(env, "CARGO_HOME"), offline=True, root=trust.root
        )
    except FeatcheckError:
        config = CheckoutConfig()
    return CommandSetup(None, env, workdir, config, environment_rustflags(env))


def isolated_setup(
    workdir: Path,
    places: TrustContext,
    *,
    offline: bool,
    timeout: float,
    toolchain: Toolchain | None = None,
) -> CommandSetup:
    """The real binaries of the user's toolchain (`toolchain`, else the one chosen for
    `workdir`), isolated from the checkout (see above)."""
    env = _plain_environment()
    toolchain = toolchain or resolve_toolchain(workdir, timeout, trust=places)
    rustc = str(toolchain.rustc)
    # The environment beats every configuration file: the real compiler, no wrappers.
    env.update({"RUSTC": rustc, "CARGO_BUILD_RUSTC": rustc})
    if toolchain.rustup_name is not None:
        # Anything that reaches a rustup proxy gets this toolchain, not the checkout's.
        env["RUSTUP_TOOLCHAIN"] = toolchain.rustup_name
    filter_environment_rustflags(env)
    cargo_home = places.cargo_home
    if places.untrusted_cargo_home is not None:
        cargo_home = _private_cargo_home(places)  # named in `env` below
    config = read_checkout_config(
        workdir,
        env,
        cargo_home,
        offline=offline,
        untrusted_home=places.untrusted_cargo_home,
        root=places.root,
    )
    for name in WRAPPER_VARIABLES:
        env.pop(name, None)
    if config.names_wrapper:
        # Only an empty setting disables a wrapper named in a configuration file. Only
        # then: cargo cannot fingerprint an empty wrapper, and keeps no answer of rustc.
        env.update(dict.fromkeys(WRAPPER_VARIABLES, ""))
    if (build_directory := _cargo_build_directory(places.cache, toolchain)) is not None:
        env["CARGO_TARGET_DIR"] = str(build_directory)
        # cargo 1.91+ keeps rustc's answers in the build directory (the target directory
        # unless configured), whose setting expands `{...}` templates.
        if not {"{", "}"} & set(str(build_directory)):
            env["CARGO_BUILD_BUILD_DIR"] = str(build_directory)
    rustflags = environment_rustflags(env)
    _offer_no_git_credentials(env, cargo_home)
    config = config._replace(arguments=(*config.arguments, GIT_THROUGH_THE_CLI))
    return CommandSetup(toolchain, env, NEUTRAL_DIRECTORY, config, rustflags, places.cache)


GIT_THROUGH_THE_CLI = option("--config", "net.git-fetch-with-cli=true", CONFIG_SETTING)
"""cargo fetches git dependencies with the git program, whose configuration the environment
below can take away entirely (cargo's built-in git reads the system's /etc/gitconfig, with
whatever credential helpers it names, whatever the environment says)."""

NO_HOME = os.path.join(os.devnull, "featcheck-offers-no-credentials")
"""A home directory that can never exist: no `.gitconfig`, `.git-credentials` or `.netrc`."""


def _offer_no_git_credentials(env: dict[str, str], cargo_home: Path | None) -> None:
    """No credential of the user's goes to a host the checkout names. A git dependency
    (`helper = { git = "http://HOST/x.git" }`) makes cargo fetch from HOST; on a 401 git asks
    the user's credential helpers, and HOST receives the token. So git gets no configuration
    but cargo's own repositories' (no system or global file, an empty home), no prompt, no
    ssh agent or key, and no transport that runs a command (`ext::`). A private git
    dependency is then fetched by the user first (`cargo fetch`), with their credentials, as
    their own decision; cargo finds it in CARGO_HOME. cargo and rustup keep their homes."""
    if cargo_home is not None:
        env["CARGO_HOME"] = str(cargo_home)
    if (rustup_home := default_home(env, "RUSTUP_HOME")) is not None:
        env["RUSTUP_HOME"] = str(rustup_home)
    for name in ("SSH_AUTH_SOCK", "SSH_ASKPASS", "GIT_ASKPASS", "GIT_SSH", "GIT_SSH_COMMAND"):
        env.pop(name, None)
    env.update(
        {
            "HOME": NO_HOME,
            "XDG_CONFIG_HOME": NO_HOME,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_SYSTEM": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_ALLOW_PROTOCOL": "https:http:ssh:git:file",
            # ssh reads keys and its configuration from the account's home, not $HOME.
            "GIT_SSH_COMMAND": "ssh -F /dev/null -o BatchMode=yes -o IdentitiesOnly=yes "
            "-o IdentityFile=/dev/null -o IdentityAgent=none",
        }
    )


def _cargo_build_directory(cache: Path | None, toolchain: Toolchain) -> Path | None:
    """Where cargo keeps what this toolchain's rustc answered (`.rustc_info.json`, ~40 ms of
    each cargo call without a target directory; docs/speed.md): in featcheck's user cache, the
    project's own target/ left alone (and never read). None when the cache cannot be made."""
    if cache is None:
        return Path(NO_BUILD_DIRECTORY) if os.name != "nt" else None
    name = toolchain.rustup_name
    directory = cache / "cargo" / (name if name and name not in (".", "..") else "default")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return directory


def _private_cargo_home(places: TrustContext) -> Path:
    """featcheck's own CARGO_HOME, used where the user's lies inside the checkout: its
    configuration would be the checkout's and its registry cache the checkout's files. It holds
    only what cargo downloads from the sources the user's environment names."""
    if places.cache is None:
        raise FeatcheckError(
            "CARGO_HOME lies inside the audited checkout, and so does featcheck's cache: "
            "featcheck obeys no configuration and trusts no cache of the checkout; set "
            "XDG_CACHE_HOME (or CARGO_HOME) outside it, or pass --trust-checkout",
            path=places.untrusted_cargo_home,
        )
    home = places.cache / "cargo-home"
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise FeatcheckError(f"cannot create: {error.strerror or error}", path=home) from None
    return home


_VERSION = 1
_ENVIRONMENT = ("RUST_TARGET_PATH", "RUSTC_BOOTSTRAP")
_MAX_ENTRIES = 64


class RustcAnswers:
    """rustc's answers that depend only on its binary and the question, kept between runs
    (docs/speed.md): each costs a process start beside cargo's own. Keyed by the binary (a
    `rustup update` starts afresh), the question and the environment variables that can change
    an answer. Questions naming a target specification file are never kept: the file can change
    under the same name. Only answers of the real toolchain binaries are kept (not of a rustup
    proxy, whose answers change with the toolchain it picks)."""

    def __init__(self, rustc: Path, directory: Path | None, environment: Mapping[str, str]) -> None:
        self._file: Path | None = None  # none where rustc cannot be looked at
        self._identity: list[Any] = []
        with contextlib.suppress(OSError, ValueError):
            real = os.path.realpath(rustc)
            stat = os.stat(real)
            settings = [environment.get(name) for name in _ENVIRONMENT]
            self._identity = [real, stat.st_size, stat.st_mtime_ns, stat.st_ino, settings]
            self._file = directory / "rustc-answers.json" if directory is not None else None
        self._entries: dict[str, Any] | None = None

    def ask(self, question: Sequence[str], answer: Callable[[], str | None]) -> str | None:
        """The kept answer to `question`, else `answer()` (kept when it is not None)."""
        if self._file is None or any(a.endswith(".json") for a in question):
            return answer()
        key = json.dumps([self._identity, list(question)])
        if self._entries is None:
            self._entries = read_cache(self._file, _VERSION, "answers")
        if isinstance(known := self._entries.get(key), str):
            return known
        found = answer()
        if found is not None:
            self._entries[key] = found
            # A toolchain updated now and then leaves answers nobody asks again: keep the newest.
            newest = dict(list(self._entries.items())[-_MAX_ENTRIES:])
            write_cache(self._file, _VERSION, "answers", newest)
        return found
