"""cargo's answers within one test session: the first `cargo metadata` of a question is real
cargo's (`cargo_answers.RecordingCargo`), a later identical question gets that answer back in
process, as `cargo_answers.RecordedCargo` gives a recording's.

A question is what decides cargo's answer: the bytes of every file of the workspace's tree
(from the outermost directory above the manifest that holds a Cargo.toml, as cargo looks for
its workspace), the manifest's place in it, the feature flags, cargo's configuration files
above the tree and above the directory cargo starts in, the cargo home's configuration, the
environment, the toolchain and the `--config` arguments featcheck gives cargo. The tree's own
path is left out (the same fixture copied to two places is one question) and written back
into the answer. A failing cargo is never remembered: the next identical question asks cargo.

A replayed question still goes through everything the audit does before cargo starts (the
runner's toolchain and environment, the checks of the checkout), and the lockfile cargo wrote
is written again. A member's manifest and a run that shows cargo's commands (`--verbose`)
always ask cargo. Tests whose subject is cargo's behaviour itself, or what featcheck runs
(hostile checkouts, trust, processes), do not use it; their cargo is always real.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cargo_answers import MetadataAnswer, Recording, RecordingCargo, question
from cli_in_process import answered_by

import featcheck.audit
from featcheck.audit import cargo_source
from featcheck.boundary import TrustContext
from featcheck.cargo.pending_metadata import PendingMetadata
from featcheck.cargo.runner import CargoRunner
from featcheck.featureset import AuditOptions
from featcheck.fileio import refuse_special_manifests

_NOT_DECIDING = frozenset({"PYTEST_CURRENT_TEST"})
"""Environment variables cargo does not read that change from test to test."""

WORKSPACE = "{workspace}"


def outermost_tree(manifest: Path) -> Path:
    """The outermost directory above `manifest` (itself included) that holds a Cargo.toml:
    every workspace cargo may find for it lies inside."""
    root = manifest.parent
    for directory in manifest.parent.parents:
        if (directory / "Cargo.toml").is_file():
            root = directory
    return root


def _configurations(directory: Path) -> list[str]:
    """cargo's configuration files in `directory` and above it, with their bytes."""
    found = []
    for place in (directory, *directory.parents):
        for name in (".cargo/config.toml", ".cargo/config"):
            file = place / name
            if file.is_file():
                found.append(f"{file}\0{file.read_bytes().hex()}")
    return found


class _TreePlaces:
    """Only the tree's own path becomes a placeholder (cargo_answers.Places does more): the
    registry and cargo's target directory are the session's, the same for every identical
    question."""

    def __init__(self, tree: Path) -> None:
        self.tree = tree

    def abstract(self, root: object, stdout: str) -> str:
        paths = {json.dumps(str(place))[1:-1] for place in (self.tree, self.tree.resolve())}
        for path in sorted(paths, key=len, reverse=True):
            stdout = stdout.replace(path, WORKSPACE)
        return stdout

    def concrete(self, stdout: str) -> str:
        return stdout.replace(WORKSPACE, json.dumps(str(self.tree))[1:-1])


class CargoMemo:
    """The session's `cargo metadata` answers by question, and how often each was asked."""

    def __init__(self) -> None:
        self.answers: dict[str, MetadataAnswer] = {}
        self.real = 0
        self.replayed = 0

    def source(self, workdir: Path, options: AuditOptions, trust: TrustContext) -> MemoCargo:
        """An audit's source (audit.SourceFactory): real cargo, remembered."""
        return MemoCargo.of(cargo_source(workdir, options, trust), self)

    @contextlib.contextmanager
    def answering(self) -> Iterator[CargoMemo]:
        """Every audit in this process (the command line's, `--diff`'s of the fixed copy, the
        copy a fix is confirmed in) asks this memo. The command line's audit names the
        factory where it starts cargo (cli/lazy.py): that name is replaced too."""
        saved = featcheck.audit.cargo_source
        featcheck.audit.cargo_source = self.source  # type: ignore[assignment]
        try:
            with answered_by(self.source):
                yield self
        finally:
            featcheck.audit.cargo_source = saved


class MemoCargo(CargoRunner):
    """The CargoRunner `audit.cargo_source` makes (an audit tells a runner by its class:
    `--resolver cargo` asks it for `cargo tree`), whose `cargo metadata` answers go through a
    memo; every other question is the runner's own."""

    memo: CargoMemo

    @classmethod
    def of(cls, runner: CargoRunner, memo: CargoMemo) -> MemoCargo:
        remembering = cls.__new__(cls)
        remembering.__dict__.update(vars(runner))
        remembering.memo = memo
        return remembering

    def question(self, manifest: Path, all_features: bool, features: tuple[str, ...]) -> str:
        root = outermost_tree(manifest)
        setup = self.prepared_setup()  # the toolchain, environment and checks cargo gets
        environment = {
            name: value.replace(str(root), WORKSPACE)
            for name, value in setup.environment.items()
            if name not in _NOT_DECIDING
        }
        home = Path(environment.get("CARGO_HOME") or Path.home() / ".cargo")
        home_config = home / "config.toml"
        parts = [
            question(root, all_features, features),
            manifest.relative_to(root).as_posix(),
            str(setup.toolchain),
            [str(argument) for argument in setup.config.arguments],
            sorted(environment.items()),
            home_config.read_text(encoding="utf-8") if home_config.is_file() else "",
            _configurations(root.parent),
            _configurations(setup.cwd),
            [self.offline, self.locked],
        ]
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()

    def start_metadata(
        self, manifest_path: Path, *, all_features: bool = False, features: tuple[str, ...] = ()
    ) -> PendingMetadata:
        root = outermost_tree(manifest_path)
        # A member's manifest: cargo's lockfile lies above it. `--verbose` shows each command
        # cargo runs: a replay would run none.
        if root != manifest_path.parent or self.on_command is not None:
            return super().start_metadata(
                manifest_path, all_features=all_features, features=features
            )
        key = self.question(manifest_path, all_features, features)
        answer = self.memo.answers.get(key)
        if answer is None:
            return self._asked(manifest_path, key, root, all_features, features)
        self.memo.replayed += 1
        refuse_special_manifests(manifest_path, self.checkout)
        if answer.lockfile is not None:  # cargo writes the lockfile it resolved
            (manifest_path.parent / "Cargo.lock").write_text(answer.lockfile, encoding="utf-8")
        stdout = _TreePlaces(root).concrete(answer.stdout)
        return PendingMetadata(lambda parse: parse(stdout))

    def _asked(
        self,
        manifest_path: Path,
        key: str,
        root: Path,
        all_features: bool,
        features: tuple[str, ...],
    ) -> PendingMetadata:
        """Real cargo's answer, remembered under `key` once cargo gave it."""
        self.memo.real += 1
        recording = Recording(registry="")
        # CargoRunner's own start_metadata: real cargo.
        recorder = RecordingCargo(super(), recording, _TreePlaces(root))  # type: ignore[arg-type]
        pending = recorder.start_metadata(
            manifest_path, all_features=all_features, features=features
        )

        def answer(parse: Any) -> Any:
            workspace = pending.result(parse)  # raises where cargo failed: nothing kept
            (self.memo.answers[key],) = recording.metadata.values()
            return workspace

        return PendingMetadata(answer, pending.cancel)


_SESSION = CargoMemo()


def session_memo() -> CargoMemo:
    """The memo this test process shares (each xdist worker has its own)."""
    return _SESSION
