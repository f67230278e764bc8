"""Build the probe for one backend configuration, once: cached by everything that shapes it.

Layout under the user's cache directory ($XDG_CACHE_HOME, else ~/.cache):

    featcheck/probe/target/          one cargo target directory shared by every configuration,
                                     so a second configuration recompiles only what differs
    featcheck/probe/<key>/           one configuration: Cargo.toml, Cargo.lock, src/, the binary

`<key>` hashes the probe's sources, the generated manifest, the member's Cargo.lock, `rustc -vV`
and the RUSTFLAGS variables; a configuration whose binary exists is not built again, so a second
probe starts timing as soon as cargo has resolved the member.

Only registry crates (at the member's locked versions) and the probe crate itself are compiled;
cargo runs in the cache directory, so nothing of the audited checkout is read but its lockfile.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from featcheck.boundary import trusted_places
from featcheck.cargo.argv_gate import TARGET, Argument, GateError, option, refuse_unsafe, word
from featcheck.cargo.process import neutral_directory, run_process
from featcheck.cargo.runner import CargoRunner
from featcheck.cargo.tree_text import TreeTextError, parse_tree_text
from featcheck.errors import FeatcheckError
from featcheck.fileio import user_cache_directory
from featcheck.probe.manifest import PACKAGE, render_cargo_toml
from featcheck.probe.progress import BuildProgress
from featcheck.probe.resolve import BackendConfig

CRATE_DIR = Path(__file__).parent / "crate"
"""The probe crate's sources, shipped inside the package (see pyproject's package-data)."""
CACHE_VERSION = "1"
_FLAG_VARIABLES = ("RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS")
_NETWORK_SIGNS = (
    "failed to download",
    "could not resolve host",
    "couldn't resolve host",
    "failed to query replaced source",
    "network failure",
    "spurious network error",
    "failed to get `",
    "unable to update registry",
    "failed to update registry",
    "download of ",
)
_OFFLINE_SIGNS = (
    "--offline was specified",
    "attempting to make an http request, but --offline",
    "offline mode",
)


def cache_root(workdir: Path) -> Path:
    """$XDG_CACHE_HOME/featcheck/probe, or ~/.cache/featcheck/probe: never inside the checkout
    of `workdir`, where a planted "probe built before" would be run as featcheck's own, and
    cargo would obey the checkout's configuration from the probe's directory upward."""
    directory = user_cache_directory(os.environ)
    if directory is None:
        raise FeatcheckError("no cache directory for the probe: set XDG_CACHE_HOME or HOME")
    if trusted_places(workdir, os.environ).cache is None:
        raise FeatcheckError(
            "featcheck's cache directory lies inside the audited checkout: the probe builds "
            "and runs nothing kept there; set XDG_CACHE_HOME outside the checkout",
            path=directory,
        )
    return directory / "probe"


@dataclass(frozen=True)
class Toolset:
    """The cargo binary and environment every probe command runs with."""

    cargo: str
    environment: dict[str, str]
    rustc_version: str
    """`rustc -vV`, part of the cache key."""


def _constant(flag: str, value: str) -> Argument:
    """`--flag=value` for one of the probe's own constants, never checkout text."""
    return Argument(f"{flag}={value}")


def _target(flag: str, target: str) -> Argument:
    """`--flag=TRIPLE` for the host triple rustc reported, through the gate all the same."""
    try:
        return option(flag, target, TARGET)
    except GateError as error:
        raise FeatcheckError(f"target: {error}") from None


def find_toolset(workdir: Path, target_dir: Path, timeout: float = 300.0) -> Toolset:
    """cargo and rustc as featcheck's runner picks them (the user's toolchain, not one the
    checkout names), plus a C linker; a clear one-line error when one is missing."""
    if shutil.which("cargo") is None:
        raise FeatcheckError(
            "cargo not found on PATH: the probe compiles with cargo; install Rust "
            "(https://rustup.rs) or add it to PATH"
        )
    runner = CargoRunner(workdir, timeout=timeout)
    # The runner's environment: rustflags through the allow-list, and featcheck's own
    # CARGO_HOME where the user's lies inside the checkout (its registry sources are the
    # checkout's files, and the probe would compile them).
    environment = runner.environment()
    cargo, rustc = "cargo", "rustc"
    toolchain = runner.toolchain
    if toolchain is not None:
        cargo, rustc = str(toolchain.cargo), str(toolchain.rustc)
    if os.name != "nt":
        linker = environment.get("CC") or "cc"
        if shutil.which(linker.split()[0] if linker.split() else "cc") is None:
            raise FeatcheckError(
                f"no C toolchain: `{linker}` is not on PATH, and Rust links programs with it; "
                "install one (Debian/Ubuntu: build-essential; macOS: xcode-select --install)"
            )
    environment.update(
        {
            "CARGO_TARGET_DIR": str(target_dir),
            "CARGO_TERM_COLOR": "never",
            "CARGO_TERM_PROGRESS_WHEN": "never",
        }
    )
    environment.pop("CARGO_BUILD_TARGET", None)  # the probe runs here: build for the host
    environment.pop("CARGO_BUILD_BUILD_DIR", None)  # the audit's: the probe builds in its own
    output = run_process(
        rustc,
        [word("-vV")],
        cwd=neutral_directory(),
        env=environment,
        timeout=min(timeout, 60.0),
        what="`rustc -vV`",
    )
    if output.returncode != 0:
        raise FeatcheckError(f"could not run `rustc -vV`: {output.stderr.strip()[:200]}")
    return Toolset(cargo, environment, output.stdout)


def probe_sources() -> dict[str, bytes]:
    """The probe crate's source files, relative path -> content."""
    sources = {
        path.relative_to(CRATE_DIR).as_posix(): path.read_bytes()
        for path in sorted((CRATE_DIR / "src").rglob("*.rs"))
    }
    if "src/main.rs" not in sources:
        raise FeatcheckError(f"featcheck's probe crate is missing from {CRATE_DIR}: reinstall")
    return sources


def cache_key(config: BackendConfig, toolset: Toolset, *, mlp: bool) -> str:
    """A hash of everything that makes a different probe binary."""
    digest = hashlib.sha256(f"featcheck-probe-cache {CACHE_VERSION}\n".encode())
    for name, content in probe_sources().items():
        digest.update(f"{name} {len(content)}\n".encode() + content)
    digest.update(render_cargo_toml(config, PACKAGE, mlp=mlp).encode())
    digest.update(config.lockfile or b"<no lockfile>")
    digest.update(toolset.rustc_version.encode())
    for variable in _FLAG_VARIABLES:
        digest.update(f"{variable}={toolset.environment.get(variable, '')}\n".encode())
    return digest.hexdigest()[:16]


_PLAIN = re.compile(r"[A-Za-z0-9_.+-]{1,200}")


def _shown(text: str) -> str:
    """A crate name or version as cargo allows them, else quoted (never raw control bytes)."""
    return text if _PLAIN.fullmatch(text) else ascii(text)


@dataclass(frozen=True)
class BuildPlan:
    """One configuration, prepared in the cache: what its build would compile and run."""

    config: BackendConfig
    directory: Path
    key: str
    mlp: bool
    cached: bool
    """Its binary exists: nothing is compiled."""
    crates: tuple[str, ...] = ()
    """Every crate the build compiles, "name version", except the probe crate itself."""
    build_scripts: tuple[str, ...] | None = ()
    """Those of them whose build script cargo compiles and runs (None: cargo could not say)."""
    proc_macros: tuple[str, ...] = ()
    """Those of them that are proc-macros (loaded into rustc while compiling)."""
    started: float = 0.0


def _label(name: object, version: object) -> str:
    return f"{_shown(str(name))} {_shown(str(version))}"


def build_scripts(metadata: dict[str, Any], crates: set[str]) -> list[str]:
    """Those of `crates` ("name version") with a build script, from `cargo metadata` output."""
    found = set()
    for package in metadata.get("packages", []):
        if not isinstance(package, dict):
            continue
        label = _label(package.get("name"), package.get("version"))
        kinds = {k for t in package.get("targets", []) for k in t.get("kind", [])}
        if label in crates and "custom-build" in kinds:
            found.add(label)
    return sorted(found)


@dataclass(frozen=True)
class BuiltProbe:
    """A probe binary and how it came to be."""

    binary: Path
    key: str
    cached: bool
    seconds: float
    """Seconds spent preparing it (resolving, verifying, compiling; ~0 when cached)."""


def classify_build_failure(stderr: str, *, offline: bool) -> str:
    """One line saying why cargo failed, with what to do."""
    lowered = stderr.lower()
    first = next(
        (line.strip() for line in stderr.splitlines() if line.strip().startswith("error")),
        (stderr.strip().splitlines() or ["no message"])[-1].strip(),
    )
    if "linker `" in lowered and "not found" in lowered:
        return (
            f"no C toolchain: cargo could not find the linker ({first}); install one "
            "(Debian/Ubuntu: build-essential; macOS: xcode-select --install)"
        )
    if any(sign in lowered for sign in _OFFLINE_SIGNS) or (
        offline and "failed to get `" in lowered
    ):
        return (
            "the local registry cache lacks crates the probe needs, and --offline keeps cargo "
            f"off the network ({first}); run once with network access"
        )
    if any(sign in lowered for sign in _NETWORK_SIGNS):
        return (
            "cargo could not download crates the probe needs: no network? "
            f"({first}); with a filled registry cache, --offline works without one"
        )
    if "error[e" in lowered or "could not compile `featcheck-probe`" in lowered:
        return (
            "the probe crate does not compile against this burn version (it is written for "
            f"burn 0.22): {first}"
        )
    return f"cargo failed: {first}"


class ProbeBuilder:
    """Prepares, verifies and compiles probe configurations in the cache."""

    def __init__(
        self,
        workdir: Path,
        *,
        offline: bool,
        timeout: float,
        say: Callable[[str], None],
        on_command: Callable[[list[str]], None] | None = None,
        root: Path | None = None,
    ) -> None:
        self.root = root if root is not None else cache_root(workdir)
        self.target_dir = self.root / "target"
        self.offline = offline
        self.timeout = timeout
        self.say = say
        self.on_command = on_command
        self.toolset = find_toolset(workdir, self.target_dir, timeout)

    def _flags(self) -> list[Argument]:
        return [word("--offline")] if self.offline else []

    def _cargo(self, directory: Path, args: list[Argument]) -> str:
        """One cargo command in the probe's directory, through the audit's process runner
        (gated arguments, --timeout, the whole process group killed on expiry)."""
        arguments = [*args, *self._flags()]
        if self.on_command is not None:
            self.on_command(["cargo", *arguments])
        output = run_process(
            self.toolset.cargo,
            arguments,
            cwd=directory,
            env=self.toolset.environment,
            timeout=self.timeout,
            what=f"`cargo {args[0]}` for the probe",
        )
        if output.returncode != 0:
            raise FeatcheckError(classify_build_failure(output.stderr, offline=self.offline))
        return output.stdout

    def prepare(self, config: BackendConfig, *, mlp: bool) -> tuple[Path, str]:
        """Write the configuration's crate into the cache; returns (its directory, key)."""
        key = cache_key(config, self.toolset, mlp=mlp)
        directory = self.root / key
        (directory / "src").mkdir(parents=True, exist_ok=True)
        for name, content in probe_sources().items():
            path = directory / name
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_if_changed(path, content)
        manifest = render_cargo_toml(config, f"{PACKAGE}-{key}", mlp=mlp)
        _write_if_changed(directory / "Cargo.toml", manifest.encode())
        if config.lockfile is not None and not (directory / "Cargo.lock").exists():
            _write_if_changed(directory / "Cargo.lock", config.lockfile)
        return directory, key

    def verify(self, directory: Path, config: BackendConfig) -> None:
        """cargo tree must show the member's exact features on every pinned crate."""
        text = self._cargo(
            directory,
            [
                word("tree"),
                _constant("--edges", "normal"),
                _constant("--format", "{p} [{f}]"),
                _constant("--prefix", "depth"),
                _constant("--charset", "ascii"),
            ],
        )
        try:
            graph = parse_tree_text(text).graph
        except TreeTextError as error:
            raise FeatcheckError(f"could not read the probe's cargo tree: {error}") from None
        for pin in config.pins:
            nodes = [n for n in graph.named(pin.name) if n.version == pin.version and not n.host]
            got = sorted({f for n in nodes for f in n.features})
            if len(nodes) != 1 or got != sorted(pin.features):
                found = ", ".join(f"{n.version} [{','.join(sorted(n.features))}]" for n in nodes)
                raise FeatcheckError(
                    f"cannot reproduce {config.member}'s build: it builds {pin}, the probe would "
                    f"build {pin.name} {found or 'not at all'}; refusing to time something else"
                )

    def plan(self, config: BackendConfig, *, mlp: bool) -> BuildPlan:
        """Prepare `config` in the cache and say what building it would compile and run
        (nothing when its binary is there); verified against the member's build first."""
        started = time.monotonic()
        directory, key = self.prepare(config, mlp=mlp)
        if self._binary(directory, key).is_file() and (directory / "built.json").is_file():
            return BuildPlan(config, directory, key, mlp, True, started=started)
        self.say(
            f"checking that the probe reproduces {config.member}'s {config.backend} (cargo tree)"
        )
        self.verify(directory, config)
        crates, macros = self._compiled(directory, config)
        return BuildPlan(
            config,
            directory,
            key,
            mlp,
            False,
            tuple(sorted(crates)),
            self._build_scripts(directory, config, crates),
            tuple(sorted(macros)),
            started,
        )

    def _compiled(self, directory: Path, config: BackendConfig) -> tuple[set[str], set[str]]:
        """(every crate, the proc-macros) a build compiles, as cargo tree resolves them."""
        text = self._cargo(
            directory,
            [
                word("tree"),
                _constant("--edges", "normal,build"),
                _constant("--format", "{p} [{f}]"),
                _constant("--prefix", "none"),
                _constant("--charset", "ascii"),
                _target("--target", config.target),
            ],
        )
        try:
            graph = parse_tree_text(text).graph
        except TreeTextError as error:
            raise FeatcheckError(f"could not read the probe's cargo tree: {error}") from None
        nodes = [n for n in graph.nodes() if n.name != PACKAGE]
        crates = {_label(n.name, n.version) for n in nodes}
        return crates, {_label(n.name, n.version) for n in nodes if n.proc_macro}

    def _build_scripts(
        self, directory: Path, config: BackendConfig, crates: set[str]
    ) -> tuple[str, ...] | None:
        """Which of `crates` have a build script (cargo tree cannot say; cargo metadata can,
        but may need manifests the registry cache lacks under --offline: then None)."""
        try:
            text = self._cargo(
                directory,
                [
                    word("metadata"),
                    _constant("--format-version", "1"),
                    _target("--filter-platform", config.target),
                ],
            )
            metadata = json.loads(text)
        except (FeatcheckError, ValueError):
            return None
        return tuple(build_scripts(metadata if isinstance(metadata, dict) else {}, crates))

    def _binary(self, directory: Path, key: str) -> Path:
        return directory / _exe(f"{PACKAGE}-{key}")

    def build(self, plan: BuildPlan) -> BuiltProbe:
        """The probe binary for a plan: compiled now, or the cached one."""
        started, directory, key, config = plan.started, plan.directory, plan.key, plan.config
        binary = self._binary(directory, key)
        stamp = directory / "built.json"
        if plan.cached:
            return BuiltProbe(binary, key, True, time.monotonic() - started)
        total = len(plan.crates) + 1
        self.say(
            f"building the probe for {config.backend} ({total} crates, release profile; the "
            f"first build takes minutes, later probes reuse it: {directory})"
        )
        self._compile(directory, key, total)
        built = self.target_dir / "release" / _exe(f"{PACKAGE}-{key}")
        if not built.is_file():
            raise FeatcheckError(f"cargo reported success but {built.name} was not built")
        partial = binary.with_name(binary.name + ".partial")
        shutil.copy2(built, partial)
        os.replace(partial, binary)
        seconds = time.monotonic() - started
        stamp.write_text(json.dumps({"key": key, "seconds": round(seconds, 1)}) + "\n")
        return BuiltProbe(binary, key, False, seconds)

    def _compile(self, directory: Path, key: str, total: int) -> None:
        arguments = [
            word("build"),
            word("--release"),
            _constant("--bin", f"{PACKAGE}-{key}"),
            *self._flags(),
        ]
        refuse_unsafe(arguments)
        command = [self.toolset.cargo, *arguments]
        if self.on_command is not None:
            self.on_command(["cargo", *arguments])
        progress = BuildProgress(total)
        tail: deque[str] = deque(maxlen=200)
        try:
            process = subprocess.Popen(
                command,
                cwd=directory,
                env=self.toolset.environment,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",
                start_new_session=os.name == "posix",
            )
        except OSError as error:
            raise FeatcheckError(f"could not run cargo: {error.strerror or error}") from None
        timed_out = threading.Event()

        def expire() -> None:
            timed_out.set()
            _kill(process)

        timer = threading.Timer(self.timeout, expire)
        timer.daemon = True
        timer.start()
        try:
            assert process.stderr is not None
            for line in process.stderr:
                tail.append(line)
                progress.line(line)
            process.wait()
        except BaseException:
            progress.abandon()
            _kill(process)
            raise
        finally:
            timer.cancel()
        if timed_out.is_set():
            progress.abandon()
            raise FeatcheckError(
                f"building the probe did not finish within {self.timeout:g} s (raise --timeout)"
            )
        if process.returncode != 0:
            progress.abandon()
            raise FeatcheckError(classify_build_failure("".join(tail), offline=self.offline))
        progress.done()


def _exe(name: str) -> str:
    return name + (".exe" if os.name == "nt" else "")


def _write_if_changed(path: Path, content: bytes) -> None:
    with contextlib.suppress(OSError):
        if path.read_bytes() == content:
            return
    temporary = path.with_name(path.name + f".{os.getpid()}.tmp")
    temporary.write_bytes(content)
    os.replace(temporary, path)


def _kill(process: subprocess.Popen[str]) -> None:
    if os.name == "posix":
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)
