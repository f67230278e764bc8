"""Run cargo and rustc for an audit, turning every way they can fail into a FeatcheckError.

While cargo downloads, its stderr is a pipe to featcheck, so cargo prints one line per event
instead of its own progress bar: `Updating crates.io index`, `Downloading crates ...`, one
`Downloaded NAME vX` per crate and, at the end, `Downloaded 670 crates (96.0 MB) in 10.34s`.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from featcheck.cargo.argv_gate import (
    PACKAGE_SPEC,
    Argument,
    checked_option,
    feature_arguments,
    manifest_argument,
    target_argument,
    word,
)
from featcheck.cargo.command_setup import CommandSetup, RustcAnswers, isolated_setup, trusted_setup
from featcheck.cargo.failures import failure_error
from featcheck.cargo.last_answer import NOT_RUN, LastAnswer
from featcheck.cargo.pending_metadata import MODE_VARIABLE, PER_MEMBER, PendingMetadata, decide
from featcheck.cargo.process import ProcessOutput, RunningProcess, start_process
from featcheck.cargo.toolchain import Toolchain, installed
from featcheck.errors import FeatcheckError
from featcheck.featureset import DEFAULT, FeatureSelection
from featcheck.fileio import refuse_special_manifests
from featcheck.semantics.cfg import TargetCfg

if TYPE_CHECKING:
    from featcheck.boundary import TrustContext
    from featcheck.cargo.pending_metadata import Parse, Unification
    from featcheck.workspace.workspace import Workspace

_LOCATION = re.compile(r"^(?P<lead>\s*-->\s+)(?P<path>.+?)(?P<place>(:\d+)+)?$", re.MULTILINE)


class CargoRunner:
    """Runs cargo in one workspace with the user's network and lockfile choices, nothing the
    checkout supplies (command_setup.py), every value on a command line through argv_gate.py."""

    def __init__(
        self,
        workdir: Path,
        *,
        trust: TrustContext,
        offline: bool = False,
        locked: bool = False,
        timeout: float = 300.0,
        on_command: Callable[[list[str]], None] | None = None,
        on_progress: Callable[[str], None] | None = None,
        setup: CommandSetup | None = None,
        toolchain: Toolchain | None = None,
    ) -> None:
        """`setup`: the toolchain, environment and configuration of the runner whose tree
        `workdir` is a copy of (`prepared_setup`), so that cargo answers for the copy as it did
        for the tree; worked out again in the copy's directory, a toolchain that a rustup
        override names for the tree's directory would be lost. `toolchain`: that runner's
        toolchain alone, for another revision of its tree, configured as that revision says
        (ignored with `--trust-checkout`, where cargo obeys the tree it runs in)."""
        trust.refuse_outside_tree(workdir)
        self.workdir = workdir
        self.trust = trust
        self.on_progress = on_progress
        """Called with a short text while cargo downloads (`DownloadProgress`, below)."""
        self.offline = offline
        self.locked = locked
        self.timeout = timeout
        self.on_command = on_command
        """Called with each command line (program name first) just before it runs."""
        self._rustc_cfg_cache: dict[tuple[str, tuple[str, ...]], TargetCfg] = {}
        self._version: str | None = None
        self._lock = threading.Lock()
        self._setup = setup
        self._keeps_answers = setup is None
        """A runner handed another's setup works in a copy made for one question (a fix to
        confirm): its answer is never asked for again, and is not kept (last_answer.py)."""
        self._toolchain = toolchain
        self._setup_lock = threading.Lock()
        self._answers: RustcAnswers | None = None

    @property
    def checkout(self) -> Path:
        return self.trust.root

    @property
    def toolchain(self) -> Toolchain | None:
        """The toolchain cargo and rustc come from (None when the checkout is trusted)."""
        return self.prepared_setup().toolchain

    def prepared_setup(self) -> CommandSetup:
        with self._setup_lock:
            if self._setup is None and self.trust.trust_checkout:
                self._setup = trusted_setup(self.workdir, self.trust)
            elif self._setup is None:
                self._setup = isolated_setup(
                    self.workdir,
                    self.trust,
                    offline=self.offline,
                    timeout=self.timeout,
                    toolchain=self._toolchain,
                )
            return self._setup

    def _start(self, program: str, args: Sequence[Argument]) -> RunningProcess:
        setup = self.prepared_setup()
        if setup.toolchain is None:
            executable = installed(program)
        else:
            executable = str(setup.toolchain.cargo if program == "cargo" else setup.toolchain.rustc)
            if program == "cargo":
                args = [*args, *setup.config.arguments]
        if self.on_command is not None:
            self.on_command([program, *args])
        say = self.on_progress if program == "cargo" else None
        return start_process(
            executable,
            args,
            trust=self.trust,
            cwd=setup.cwd,
            env=setup.environment,
            timeout=self.timeout,
            what=f"`{program} {args[0]}`",
            on_stderr=None if say is None else DownloadProgress(say).feed,
        )

    def _finish(self, running: RunningProcess) -> ProcessOutput:
        output = running.wait()
        if output.returncode == 0:
            return output
        # cargo's `--> FILE:LINE:COL` names FILE relative to cargo's working directory; name it
        # relative to featcheck's own (or absolutely, outside it) so that it can be opened.
        cwd = self.prepared_setup().cwd

        def rewrite(match: re.Match[str]) -> str:
            full = os.path.normpath(os.path.join(cwd, match["path"]))
            try:
                here = os.getcwd()
                shown = os.path.relpath(full, here) if Path(full).is_relative_to(here) else full
            except (OSError, ValueError):
                shown = full
            return match["lead"] + shown + (match["place"] or "")

        return output._replace(stderr=_LOCATION.sub(rewrite, output.stderr))

    def _cargo_flags(self) -> list[Argument]:
        return [word(f) for f, on in (("--offline", self.offline), ("--locked", self.locked)) if on]

    def start_metadata(
        self, manifest_path: Path, *, all_features: bool = False, features: tuple[str, ...] = ()
    ) -> PendingMetadata:
        args = [
            word("metadata"),
            Argument("--format-version=1"),
            manifest_argument(manifest_path),
            *feature_arguments(FeatureSelection.of(features, all_features=all_features)),
            *self._cargo_flags(),
        ]
        featured = all_features or bool(features)
        setup = self.prepared_setup()
        last = LastAnswer.of_command(setup, args, self.checkout) if self._keeps_answers else None
        if last is None or (kept := last.kept()) is None:
            return self._cargo_metadata(manifest_path, args, last, featured)
        refuse_special_manifests(manifest_path, self.checkout)
        if self.on_command is not None:
            self.on_command([NOT_RUN, "cargo", *args])

        def answer(parse: Parse) -> Workspace:
            try:
                return parse(kept)
            except FeatcheckError:  # a kept file damaged since it was written: cargo answers
                return self._cargo_metadata(manifest_path, args, last, featured).result(parse)

        return PendingMetadata(answer, settle=last.settle)

    def _cargo_metadata(
        self,
        manifest_path: Path,
        args: list[Argument],
        last: LastAnswer | None,
        featured: bool = False,
    ) -> PendingMetadata:
        running = self._start("cargo", args)
        try:
            # Looked for while cargo starts (a large workspace has thousands of directories):
            # found, cargo is ended at once, having only read.
            refuse_special_manifests(manifest_path, self.checkout)
        except BaseException:
            running.cancel()
            raise

        def answer(parse: Parse) -> Workspace:
            # The line is parsed while cargo frees what it built and exits (~10 ms), and stands
            # only if cargo then succeeds having printed nothing more. Kept as `last` if any.
            line = running.stdout_once_a_line_ends()
            early: Workspace | None = None
            if line is not None:
                with contextlib.suppress(FeatcheckError):
                    early = parse(line)
            output = self._finish(running)
            if output.returncode != 0:
                raise failure_error("cargo metadata", output.stderr, features_chosen=featured)
            if early is None or line is not output.stdout:
                early = parse(output.stdout)
            if last is not None:
                last.keep(output.stdout, early, manifest_path)
            return early

        settle = None if last is None else last.settle
        return PendingMetadata(answer, running.cancel, running.line_or_end.is_set, settle)

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
            manifest_argument(manifest_path),
            Argument("--edges=normal"),
            checked_option("--package", package_spec, PACKAGE_SPEC),
            target_argument(self.workdir, target),
            # One "name vX (source) [features]" a line; `--prefix depth` makes the nesting
            # unambiguous and `--charset ascii` keeps the text independent of the terminal.
            Argument("--format={p} [{f}]"),
            Argument("--prefix=depth"),
            Argument("--charset=ascii"),
            *feature_arguments(features),
            *self._cargo_flags(),
        ]
        output = self._finish(self._start("cargo", args))
        if output.returncode != 0:
            raise failure_error(f"cargo tree -p {package_spec}", output.stderr)
        return output.stdout

    def host_triple(self) -> str:
        if (host := self._version_line("host")) is None:
            raise FeatcheckError("`rustc -vV` did not name the host target")
        return host

    def default_targets(self) -> list[str]:
        return list(self.prepared_setup().config.build_targets) or [self.host_triple()]

    def _version_line(self, name: str) -> str | None:
        """A line of `rustc -vV`: `host`, or `release` (`1.97.0-nightly`)."""
        with self._lock:
            if self._version is None:
                self._version = self._ask_rustc([word("-vV")]).stdout
        lines = self._version.splitlines()
        return next((x.split(":", 1)[1].strip() for x in lines if x.startswith(name + ":")), None)

    def unification(self, show: Callable[[Path], str]) -> Unification:
        setup = self.prepared_setup()
        settings = setup.config.unification
        if settings.mode is None and MODE_VARIABLE not in setup.environment:
            return PER_MEMBER  # nothing asked: no rustc to start
        return decide(settings, setup.environment, self._version_line("release"), show)

    def target_cfg(self, triple: str) -> TargetCfg:
        """`rustc --print cfg` with the rustflags cargo gives `triple`, as its target probe asks."""
        with self._lock:
            setup = self.prepared_setup()
            plain = self._rustc_cfg(triple, ())
            if (flags := setup.environment_rustflags) is None:
                flags = setup.config.rustflags(triple, plain)
            return self._rustc_cfg(triple, tuple(flags)) if flags else plain

    def host_cfg(self) -> TargetCfg:
        """cfg values of units built for the host (build scripts, proc-macros and their
        dependencies): cargo, given `--target`, passes them no rustflags."""
        host = self.host_triple()
        with self._lock:
            return self._rustc_cfg(host, ())

    def _ask_rustc(self, args: list[Argument]) -> ProcessOutput:
        setup = self.prepared_setup()
        if setup.toolchain is None:
            return self._finish(self._start("rustc", args))
        if self._answers is None:
            self._answers = RustcAnswers(setup.toolchain.rustc, setup.cache, setup.environment)
        failed: list[ProcessOutput] = []

        def answer() -> str | None:
            output = self._finish(self._start("rustc", args))
            if output.returncode != 0:
                failed.append(output)
                return None
            return output.stdout

        stdout = self._answers.ask([str(a) for a in args], answer)
        return failed[0] if stdout is None else ProcessOutput(0, stdout, "")

    def _rustc_cfg(self, triple: str, flags: tuple[Argument, ...]) -> TargetCfg:
        """`rustc --print=cfg --target=TRIPLE FLAGS...` (the caller holds the lock)."""
        key = (triple, flags)
        if key not in self._rustc_cfg_cache:
            target = target_argument(self.workdir, triple)
            output = self._ask_rustc([Argument("--print=cfg"), target, *flags])
            if output.returncode != 0:
                said = (output.stderr.strip().splitlines() or ["no message"])[0]
                if triple in self.prepared_setup().config.build_targets:
                    said += " (it is the cargo configuration's `build.target`)"
                raise FeatcheckError(f"rustc does not know target {triple!r}: {said}")
            self._rustc_cfg_cache[key] = TargetCfg.parse(triple, output.stdout)
        return self._rustc_cfg_cache[key]


_TOTAL = re.compile(r"Downloaded (\d+) crates? \((\d+(?:\.\d+)? [KMGT]?i?B)\)")


class DownloadProgress:
    """Turns chunks of cargo's stderr into short progress texts for `say` (counts and sizes,
    never the checkout's names)."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self._say = say
        self._partial = b""
        self._downloaded = 0

    def feed(self, chunk: bytes) -> None:
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()[-4096:]  # a line still being written (bounded)
        news = ""
        for raw in lines:
            line = raw.decode("utf-8", errors="replace").strip()
            if (total := _TOTAL.fullmatch(line.split(" in ", 1)[0])) is not None:
                news = f"downloaded {total.group(1)} crates ({total.group(2)})"
            elif line.startswith("Downloaded "):
                self._downloaded += 1
                news = f"downloading crates… {self._downloaded}"
            elif line.startswith("Downloading "):
                news = "downloading crates…"
            elif line.startswith("Updating ") and line.endswith(" index"):
                news = "updating the registry index…"
        if news:
            self._say(news)
