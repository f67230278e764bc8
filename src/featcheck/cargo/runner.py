"""Run cargo and rustc for an audit, turning every way they can fail into a FeatcheckError."""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from featcheck.boundary import (
    TrustedPlaces,
    checkout_root,
    default_cargo_home,
    trusted_places,
)
from featcheck.cargo.argv_gate import (
    ABSOLUTE_PATH,
    FEATURE,
    PACKAGE_SPEC,
    TARGET,
    Argument,
    GateError,
    Grammar,
    option,
    target_triple,
    word,
)
from featcheck.cargo.checkout_config import (
    CheckoutConfig,
    environment_rustflags,
    filter_environment_rustflags,
    read_checkout_config,
)
from featcheck.cargo.process import ProcessOutput, RunningProcess, start_process
from featcheck.cargo.toolchain import Toolchain, neutral_directory, resolve_toolchain, which
from featcheck.errors import FeatcheckError
from featcheck.featureset import DEFAULT, FeatureSelection
from featcheck.fileio import special_manifest

if TYPE_CHECKING:
    # Needed once cargo has started, and imported then: the user waits on what runs before.
    from featcheck.cargo.cfg import TargetCfg
    from featcheck.cargo.last_answer import LastAnswer
    from featcheck.cargo.rustc_answers import RustcAnswers
    from featcheck.workspace.workspace import Workspace

# `{p} [{f}]` gives "name vX (source) [features]" per line; `--prefix depth` makes the nesting
# unambiguous and `--charset ascii` keeps the text independent of the terminal.
TREE_FORMAT = "{p} [{f}]"


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


def _cargo_build_directory(cache: Path | None, toolchain: Toolchain) -> Path | None:
    """The directory, in featcheck's user cache, where cargo keeps what this toolchain's rustc
    answered (`.rustc_info.json`, which a build keeps in the project's target/): `rustc -vV`
    and `--print cfg`, ~40 ms of each cargo call that has no target directory to keep them in.
    cargo compiles nothing for featcheck and writes nothing else there; the project's own
    target/ is left alone (and never read). None when the cache cannot be made."""
    if cache is None:
        return Path(NO_BUILD_DIRECTORY) if os.name != "nt" else None
    name = toolchain.rustup_name
    directory = cache / "cargo" / (name if name and name not in (".", "..") else "default")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return directory


def _private_cargo_home(places: TrustedPlaces) -> Path:
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


# A NamedTuple, not a dataclass: made before cargo starts (see audit.py).
class _Setup(NamedTuple):
    """How every command of one runner runs: binaries, environment, working directory."""

    toolchain: Toolchain | None
    environment: dict[str, str]
    cwd: Path
    config: CheckoutConfig
    """The data parts of the checkout's cargo configuration (`--config=` arguments, rustflags)."""
    environment_rustflags: list[Argument] | None
    """The kept flags of RUSTFLAGS/CARGO_ENCODED_RUSTFLAGS, which replace the configured ones."""
    cache: Path | None = None
    """featcheck's cache directory, where the checkout cannot have written it (else None)."""


CargoOutput = ProcessOutput
"""What one cargo or rustc invocation printed."""


class CargoRunner:
    """Runs cargo in one workspace with the user's network and lockfile choices.

    By default nothing the checkout supplies is run: cargo and rustc are the real binaries of
    the toolchain the user installed (see toolchain.py), cargo runs from a neutral directory
    with only the data parts of the checkout's `.cargo/config.toml` (see checkout_config.py),
    and its environment names the compiler and disables wrappers. `trust_checkout` restores
    plain `cargo` in the checkout, honouring its toolchain file and configuration.

    Every value on a command line (package, target, manifest path) passes the gate in
    argv_gate.py, whoever the caller is, and goes as one `--flag=value` argument.
    """

    def __init__(
        self,
        workdir: Path,
        *,
        offline: bool = False,
        locked: bool = False,
        timeout: float = 300.0,
        on_command: Callable[[list[str]], None] | None = None,
        trust_checkout: bool = False,
        on_progress: Callable[[str], None] | None = None,
    ) -> None:
        self.workdir = workdir
        self.on_progress = on_progress
        """Called with a short text while cargo downloads (see cargo/progress.py)."""
        self.offline = offline
        self.locked = locked
        self.timeout = timeout
        self.on_command = on_command
        """Called with each command line (program name first) just before it runs."""
        self.trust_checkout = trust_checkout
        """Run `cargo`/`rustc` from PATH in the checkout, obeying its toolchain and config."""
        self._cfg_cache: dict[str, TargetCfg] = {}
        """Each target's cfg as cargo sees it for target units (with the target's rustflags)."""
        self._rustc_cfg_cache: dict[tuple[str, tuple[str, ...]], TargetCfg] = {}
        self._host: str | None = None
        self._lock = threading.Lock()
        self._setup: _Setup | None = None
        self._setup_lock = threading.Lock()
        self._answers: RustcAnswers | None = None
        self._checkout: Path | None = None

    @property
    def checkout(self) -> Path:
        """The root of the audited checkout (boundary.py): featcheck reads none of its files
        through a link that leads out of it."""
        if self._checkout is None:
            self._checkout = checkout_root(self.workdir)
        return self._checkout

    @property
    def toolchain(self) -> Toolchain | None:
        """The toolchain cargo and rustc come from (None when the checkout is trusted)."""
        return self._prepared().toolchain

    def environment(self) -> dict[str, str]:
        """The environment every cargo and rustc command of this runner gets (a copy)."""
        return dict(self._prepared().environment)

    def _prepared(self) -> _Setup:
        with self._setup_lock:
            if self._setup is None:
                self._setup = self._prepare()
            return self._setup

    def _prepare(self) -> _Setup:
        env = dict(os.environ)
        # Plain, stable text: no colours or progress bars in what featcheck parses.
        env["CARGO_TERM_COLOR"] = "never"
        env["CARGO_TERM_PROGRESS_WHEN"] = "never"
        if self.trust_checkout:
            # cargo reads the configuration itself; featcheck reads its rustflags only to
            # evaluate cfg as cargo will, and does without them where it cannot read them.
            try:
                config = read_checkout_config(
                    self.workdir, env, default_cargo_home(env), offline=True, root=self.checkout
                )
            except FeatcheckError:
                config = CheckoutConfig()
            return _Setup(None, env, self.workdir, config, environment_rustflags(env))
        places = trusted_places(self.workdir, env)
        toolchain = resolve_toolchain(self.workdir, self.timeout, root=places.root)
        rustc = str(toolchain.rustc)
        # The environment beats every configuration file: the real compiler, no wrappers.
        env.update({"RUSTC": rustc, "CARGO_BUILD_RUSTC": rustc})
        if toolchain.rustup_name is not None:
            # Anything that reaches a rustup proxy gets this toolchain, not the checkout's.
            env["RUSTUP_TOOLCHAIN"] = toolchain.rustup_name
        filter_environment_rustflags(env)
        cargo_home = places.cargo_home
        if places.untrusted_cargo_home is not None:
            cargo_home = _private_cargo_home(places)
            env["CARGO_HOME"] = str(cargo_home)
        config = read_checkout_config(
            self.workdir,
            env,
            cargo_home,
            offline=self.offline,
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
        return _Setup(toolchain, env, neutral_directory(), config, rustflags, places.cache)

    def _run(self, program: str, args: Sequence[Argument]) -> CargoOutput:
        return self._finish(self._start(program, args))

    def _start(self, program: str, args: Sequence[Argument]) -> RunningProcess:
        setup = self._prepared()
        if setup.toolchain is None:
            executable = which(program)
            if executable is None:
                raise FeatcheckError(
                    f"{program} not found on PATH: install Rust (https://rustup.rs) "
                    "or add it to PATH"
                )
        else:
            executable = str(setup.toolchain.cargo if program == "cargo" else setup.toolchain.rustc)
            if program == "cargo":
                args = [*args, *setup.config.arguments]
        if self.on_command is not None:
            self.on_command([program, *args])
        progress = None
        if self.on_progress is not None and program == "cargo":
            from featcheck.cargo.progress import DownloadProgress

            progress = DownloadProgress(self.on_progress).feed
        return start_process(
            executable,
            args,
            cwd=setup.cwd,
            env=setup.environment,
            timeout=self.timeout,
            what=f"`{program} {args[0]}`",
            on_stderr=progress,
        )

    def _finish(self, running: RunningProcess) -> CargoOutput:
        output = running.wait()
        if output.returncode == 0:
            return output
        return CargoOutput(
            output.returncode, output.stdout, _locations(output.stderr, self._prepared().cwd)
        )

    def _target_argument(self, target: str) -> Argument:
        """`--target=T` for a target that passed the gate. A custom target file (`x.json`) is
        named relative to the audited directory, as when cargo ran there, and made absolute
        for cargo and rustc running elsewhere."""
        target = _gated(target_triple, target, "target")
        if target.endswith(".json"):
            return _option("--target", str(self.workdir.absolute() / target), ABSOLUTE_PATH)
        return _option("--target", target, TARGET)

    def _cargo_flags(self) -> list[Argument]:
        flags: list[Argument] = []
        if self.offline:
            flags.append(word("--offline"))
        if self.locked:
            flags.append(word("--locked"))
        return flags

    def _failure(self, what: str, output: CargoOutput) -> FeatcheckError:
        from featcheck.cargo.failures import FailureKind, classify

        failure = classify(output.stderr)
        hint = ""
        if failure.kind is FailureKind.LOCK_OUTDATED:
            hint = " (Cargo.lock is out of date; run `cargo update --workspace`)"
        elif failure.kind is FailureKind.OFFLINE_MISSING:
            hint = " (run `cargo fetch` once with network, or drop --offline)"
        return FeatcheckError(f"{what} failed: {failure.summary}{hint}")

    def metadata(
        self,
        manifest_path: Path,
        *,
        all_features: bool = False,
        features: tuple[str, ...] = (),
    ) -> Workspace:
        """The workspace's packages and feature tables (one call for the whole audit).

        `all_features` (and `features`, `dependency/feature` values) resolve with every member
        feature on, so that the resolve lists every optional dependency a feature selection
        can turn on (plain metadata leaves out those nothing enables by default).
        """
        return self.start_metadata(
            manifest_path, all_features=all_features, features=features
        ).result()

    def start_metadata(
        self,
        manifest_path: Path,
        *,
        all_features: bool = False,
        features: tuple[str, ...] = (),
    ) -> PendingMetadata:
        """`metadata`, started: cargo works while the caller does, `result()` waits for it."""
        selection = FeatureSelection.of(features, all_features=all_features)
        args = [
            word("metadata"),
            _constant("--format-version", "1"),
            _manifest_argument(manifest_path),
            *_feature_arguments(selection),
            *self._cargo_flags(),
        ]
        running = self._start("cargo", args)
        try:
            # A FIFO named Cargo.toml or Cargo.lock would keep cargo waiting until the timeout.
            # It is looked for while cargo starts (a large workspace has thousands of
            # directories): found, cargo is ended at once, having only read.
            _refuse_special_manifests(manifest_path, self.checkout)
        except BaseException:
            running.cancel()
            raise

        def answer(last: LastAnswer | None) -> Workspace:
            from featcheck.workspace.workspace import parse_metadata

            # cargo prints its one line of JSON, then takes ~10 ms to free what it built and
            # exit: the line is read meanwhile (or found equal to the last audit's, parsed
            # already), and kept only if cargo then succeeds having printed nothing more.
            line = running.stdout_once_a_line_ends()
            early: Workspace | None = None
            if line is not None:
                early = last.matching(line) if last is not None else None
                if early is None:
                    with contextlib.suppress(FeatcheckError):
                        early = parse_metadata(line)
            output = self._finish(running)
            if output.returncode != 0:
                raise self._failure("cargo metadata", output)
            if early is not None and line is output.stdout:  # nothing printed after the line
                if last is not None:
                    last.keep(output.stdout)
                return early
            return parse_metadata(output.stdout)

        def last_answer() -> LastAnswer | None:
            from featcheck.cargo.last_answer import LastAnswer

            return LastAnswer.of_command(self._prepared().cache, args)

        return PendingMetadata(answer, running.cancel, last_answer)

    def tree(
        self,
        manifest_path: Path,
        package_spec: str,
        target: str,
        *,
        features: FeatureSelection = DEFAULT,
    ) -> str:
        """`cargo tree -e normal` for one package on one target: what `cargo build -p` gets
        with `features`' flags (each name one `--features=NAME` argument, through the gate)."""
        args = [
            word("tree"),
            _manifest_argument(manifest_path),
            _constant("--edges", "normal"),
            _option("--package", package_spec, PACKAGE_SPEC),
            self._target_argument(target),
            _constant("--format", TREE_FORMAT),
            _constant("--prefix", "depth"),
            _constant("--charset", "ascii"),
            *_feature_arguments(features),
            *self._cargo_flags(),
        ]
        output = self._run("cargo", args)
        if output.returncode != 0:
            raise self._failure(f"cargo tree -p {package_spec}", output)
        return output.stdout

    def host_triple(self) -> str:
        """The host target triple, as the workspace's rustc reports it."""
        with self._lock:
            if self._host is None:
                output = self._ask_rustc([word("-vV")])
                for line in output.stdout.splitlines():
                    if line.startswith("host:"):
                        self._host = line.split(":", 1)[1].strip()
                        break
                else:
                    raise FeatcheckError("`rustc -vV` did not name the host target")
            return self._host

    def target_cfg(self, triple: str) -> TargetCfg:
        """cfg values of units built for `triple`, once per target: `rustc --print cfg` with the
        rustflags cargo gives that target (`--cfg`, `-C target-feature`, ...), as cargo's own
        target probe asks it."""
        with self._lock:
            if triple not in self._cfg_cache:
                setup = self._prepared()
                plain = self._rustc_cfg(triple, ())
                flags = setup.environment_rustflags
                if flags is None:
                    flags = setup.config.rustflags(triple, plain)
                self._cfg_cache[triple] = self._rustc_cfg(triple, tuple(flags)) if flags else plain
            return self._cfg_cache[triple]

    def host_cfg(self) -> TargetCfg:
        """cfg values of units built for the host (build scripts, proc-macros and their
        dependencies): cargo, given `--target`, passes them no rustflags."""
        host = self.host_triple()
        with self._lock:
            return self._rustc_cfg(host, ())

    def _ask_rustc(self, args: list[Argument]) -> CargoOutput:
        """rustc's answer to a question that depends only on its binary and the arguments:
        kept between runs for the real toolchain binaries (see rustc_answers.py)."""
        setup = self._prepared()
        if setup.toolchain is None:
            return self._run("rustc", args)
        if self._answers is None:
            from featcheck.cargo.rustc_answers import RustcAnswers

            self._answers = RustcAnswers(setup.toolchain.rustc, setup.cache, setup.environment)
        failed: list[CargoOutput] = []

        def answer() -> str | None:
            output = self._run("rustc", args)
            if output.returncode != 0:
                failed.append(output)
                return None
            return output.stdout

        stdout = self._answers.ask([str(a) for a in args], answer)
        return failed[0] if stdout is None else CargoOutput(0, stdout, "")

    def _rustc_cfg(self, triple: str, flags: tuple[Argument, ...]) -> TargetCfg:
        """`rustc --print=cfg --target=TRIPLE FLAGS...` (the caller holds the lock)."""
        from featcheck.cargo.cfg import TargetCfg

        key = (triple, flags)
        if key not in self._rustc_cfg_cache:
            target = self._target_argument(triple)
            output = self._ask_rustc([_constant("--print", "cfg"), target, *flags])
            if output.returncode != 0:
                raise FeatcheckError(
                    f"rustc does not know target {triple!r}: "
                    + (output.stderr.strip().splitlines() or ["no message"])[0]
                )
            self._rustc_cfg_cache[key] = TargetCfg.parse(triple, output.stdout)
        return self._rustc_cfg_cache[key]


class PendingMetadata:
    """A `cargo metadata` answer on its way (see `CargoRunner.start_metadata`)."""

    def __init__(
        self,
        answer: Callable[[LastAnswer | None], Workspace],
        cancel: Callable[[], None] | None = None,
        last_answer: Callable[[], LastAnswer | None] | None = None,
    ) -> None:
        self._answer: Callable[[LastAnswer | None], Workspace] | None = answer
        self._cancel = cancel
        self._last_answer = last_answer
        self._last: LastAnswer | None = None

    def read_last_answer(self) -> None:
        """While cargo works: read and parse what it answered at the project's last audit
        (see last_answer.py), so that the same answer again needs no parsing."""
        if self._last_answer is not None and self._last is None:
            self._last = self._last_answer()
            if self._last is not None:
                self._last.read()

    @property
    def last_answer(self) -> Workspace | None:
        """The last audit's answer, parsed by `read_last_answer` (None without one). `result()`
        returns this very object when cargo answers the same again."""
        return self._last.metadata if self._last is not None else None

    def result(self) -> Workspace:
        """The metadata, once cargo has answered; its failure as a FeatcheckError."""
        assert self._answer is not None, "the metadata was taken or cancelled already"
        answer, self._answer = self._answer, None
        return answer(self._last)

    def settle(self) -> None:
        """Wait for the answer to be kept for the next audit (before the process ends)."""
        if self._last is not None:
            self._last.settle()

    def cancel(self) -> None:
        """Stop cargo: the audit ended before it needed the answer."""
        if self._answer is not None and self._cancel is not None:
            self._cancel()
        self._answer = None


_LOCATION = re.compile(r"^(?P<lead>\s*-->\s+)(?P<path>.+?)(?P<place>(:\d+)+)?$", re.MULTILINE)


def _locations(stderr: str, cwd: Path) -> str:
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


def _refuse_special_manifests(manifest_path: Path, checkout: Path) -> None:
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


_MANIFEST_NAMES = frozenset({"Cargo.toml", "Cargo.lock"})


def _gated(check: Callable[[str], str], value: str, what: str) -> str:
    """`check(value)`, its GateError as the one-line error of an audit."""
    try:
        return check(value)
    except GateError as error:
        raise FeatcheckError(f"{what}: {error}") from None


def _option(flag: str, value: str, grammar: Grammar) -> Argument:
    try:
        return option(flag, value, grammar)
    except GateError as error:
        raise FeatcheckError(f"{flag.lstrip('-')}: {error}") from None


def _feature_arguments(selection: FeatureSelection) -> list[Argument]:
    """cargo's feature flags: one `--features=NAME` per feature (each checked by the gate;
    `featureset` already holds them to cargo's grammar), then the switches."""
    found = [_option("--features", name, FEATURE) for name in selection.features]
    if selection.no_default_features:
        found.append(word("--no-default-features"))
    if selection.all_features:
        found.append(word("--all-features"))
    return found


def _constant(flag: str, value: str) -> Argument:
    """`--flag=value` for a value that is featcheck's own constant, never checkout text."""
    return Argument(f"{flag}={value}")


def _manifest_argument(manifest_path: Path) -> Argument:
    # Absolute: cargo runs in another directory.
    return _option("--manifest-path", str(manifest_path.absolute()), ABSOLUTE_PATH)
