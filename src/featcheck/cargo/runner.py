"""Run cargo and rustc for an audit, turning every way they can fail into a FeatcheckError."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from featcheck.cargo.cfg import TargetCfg
from featcheck.cargo.failures import CargoFailure, FailureKind, classify
from featcheck.cargo.metadata import WorkspaceMetadata, parse_metadata
from featcheck.errors import FeatcheckError

# `{p} [{f}]` gives "name vX (source) [features]" per line; `--prefix depth` makes the nesting
# unambiguous and `--charset ascii` keeps the text independent of the terminal.
TREE_FORMAT = "{p} [{f}]"


@dataclass(frozen=True)
class CargoOutput:
    """What one cargo invocation printed."""

    returncode: int
    stdout: str
    stderr: str


@dataclass
class CargoRunner:
    """Runs cargo in one workspace with the user's network and lockfile choices."""

    workdir: Path
    offline: bool = False
    locked: bool = False
    timeout: float = 300.0
    on_command: Callable[[list[str]], None] | None = None
    """Called with each command line (program name first) just before it runs (--verbose)."""
    _cfg_cache: dict[str, TargetCfg] = field(default_factory=dict)
    _host: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        # Plain, stable text: no colours or progress bars in what featcheck parses.
        env["CARGO_TERM_COLOR"] = "never"
        env["CARGO_TERM_PROGRESS_WHEN"] = "never"
        return env

    def _run(self, program: str, args: Sequence[str]) -> CargoOutput:
        executable = shutil.which(program)
        if executable is None:
            raise FeatcheckError(
                f"{program} not found on PATH: install Rust (https://rustup.rs) or add it to PATH"
            )
        if self.on_command is not None:
            self.on_command([program, *args])
        try:
            done = subprocess.run(
                [executable, *args],
                cwd=self.workdir,
                env=self._environment(),
                capture_output=True,
                timeout=self.timeout,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise FeatcheckError(
                f"`{program} {' '.join(args[:2])}` did not finish within {self.timeout:g} s"
                " (raise --timeout, or check for a lock held by another cargo)"
            ) from None
        except OSError as error:
            raise FeatcheckError(f"could not run {program}: {error.strerror or error}") from None
        return CargoOutput(
            done.returncode,
            done.stdout.decode("utf-8", errors="replace"),
            done.stderr.decode("utf-8", errors="replace"),
        )

    def _cargo_flags(self) -> list[str]:
        flags: list[str] = []
        if self.offline:
            flags.append("--offline")
        if self.locked:
            flags.append("--locked")
        return flags

    def _failure(self, what: str, output: CargoOutput) -> FeatcheckError:
        failure = classify(output.stderr)
        hint = ""
        if failure.kind is FailureKind.LOCK_OUTDATED:
            hint = " (Cargo.lock is out of date; run `cargo update --workspace`)"
        elif failure.kind is FailureKind.OFFLINE_MISSING:
            hint = " (run `cargo fetch` once with network, or drop --offline)"
        return FeatcheckError(f"{what} failed: {failure.summary}{hint}")

    def metadata(self, manifest_path: Path) -> WorkspaceMetadata:
        """The workspace's packages and feature tables (one call for the whole audit)."""
        args = ["metadata", "--format-version", "1", "--manifest-path", str(manifest_path)]
        output = self._run("cargo", [*args, *self._cargo_flags()])
        if output.returncode != 0:
            raise self._failure("cargo metadata", output)
        return parse_metadata(output.stdout)

    def tree(self, manifest_path: Path, package_spec: str, target: str) -> str:
        """`cargo tree -e normal` for one package on one target: what `cargo build -p` gets."""
        args = [
            "tree",
            "--manifest-path",
            str(manifest_path),
            "-e",
            "normal",
            "-p",
            package_spec,
            "--target",
            target,
            "-f",
            TREE_FORMAT,
            "--prefix",
            "depth",
            "--charset",
            "ascii",
            *self._cargo_flags(),
        ]
        output = self._run("cargo", args)
        if output.returncode != 0:
            raise self._failure(f"cargo tree -p {package_spec}", output)
        return output.stdout

    def classify_tree_failure(self, output: CargoOutput) -> CargoFailure:
        """Exposed for callers that query packages which may be absent."""
        return classify(output.stderr)

    def host_triple(self) -> str:
        """The host target triple, as the workspace's rustc reports it."""
        with self._lock:
            if self._host is None:
                output = self._run("rustc", ["-vV"])
                for line in output.stdout.splitlines():
                    if line.startswith("host:"):
                        self._host = line.split(":", 1)[1].strip()
                        break
                else:
                    raise FeatcheckError("`rustc -vV` did not name the host target")
            return self._host

    def target_cfg(self, triple: str) -> TargetCfg:
        """cfg values for `triple` (`rustc --print cfg --target`), once per target."""
        with self._lock:
            if triple not in self._cfg_cache:
                output = self._run("rustc", ["--print", "cfg", "--target", triple])
                if output.returncode != 0:
                    raise FeatcheckError(
                        f"rustc does not know target {triple!r}: "
                        + (output.stderr.strip().splitlines() or ["no message"])[0]
                    )
                self._cfg_cache[triple] = TargetCfg.parse(triple, output.stdout)
            return self._cfg_cache[triple]
