"""cargo's and rustc's answers for one workspace, recorded once from the real programs and
replayed in process through the sources protocol (featcheck.cargo.pending_metadata.MetadataSource).

`RecordingCargo` stands between an audit and a real `CargoRunner` and writes down every answer
the audit asked for: `cargo metadata` of each tree (the workspace, a fix's copy), the Cargo.lock
cargo wrote there, rustc's cfg of each target and the host. `RecordedCargo` gives those answers
back without starting a process. An answer is found by what cargo read: the bytes of every file
of the tree and the feature flags; a tree that changed since the recording has no answer, and
the audit stops with `NotRecorded` (re-record: scripts/record_cargo_answers.py).

Paths in cargo's answers are written as placeholders ({workspace}, {registry}, {target}) and
filled in with the tree's and the registry's places when replayed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from featcheck.boundary import TrustContext
from featcheck.cargo.pending_metadata import PER_MEMBER, Parse, PendingMetadata, Unification
from featcheck.cargo.runner import CargoRunner
from featcheck.semantics.cfg import TargetCfg
from featcheck.workspace.workspace import Workspace

RECORDING_VERSION = 1

RECORD = "record cargo's answers again (scripts/record_cargo_answers.py)"


class NotRecorded(LookupError):
    """The audit asked a question the recording has no answer for. Not a FeatcheckError: no
    audit may report it as cargo's failure."""


def question(root: Path, all_features: bool, features: tuple[str, ...]) -> str:
    """`cargo metadata`'s question about the tree at `root`: a digest of every file in it (but
    target/) with its path, and the feature flags."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root)
        if "target" in relative.parts[:-1]:
            continue
        digest.update(relative.as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    flags = ["--all-features"] if all_features else []
    flags += [f"--features={name}" for name in features]
    return " ".join([digest.hexdigest()[:24], *flags])


def cfg_text(cfg: TargetCfg) -> str:
    """A target's cfg as `rustc --print cfg` prints it (sorted), which TargetCfg.parse reads."""
    pairs = [f'{key}="{value}"' for key, value in sorted(cfg.pairs)]
    return "".join(f"{line}\n" for line in [*sorted(cfg.names), *pairs])


@dataclass
class MetadataAnswer:
    stdout: str
    """cargo's JSON, paths as placeholders."""
    lockfile: str | None
    """The Cargo.lock cargo left in the tree, where it changed it (None: unchanged)."""


@dataclass
class Recording:
    """What cargo and rustc answered for one workspace (one JSON file)."""

    registry: str
    """A digest of the registry cargo resolved against: another registry, another answer."""
    lockfile: str = ""
    """The workspace's Cargo.lock as `cargo generate-lockfile` wrote it."""
    metadata: dict[str, MetadataAnswer] = field(default_factory=dict)
    host: str | None = None
    host_cfg: str | None = None
    target_cfg: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> Recording:
        if not path.exists():
            raise NotRecorded(f"{path} is missing: {RECORD}")
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.pop("version") != RECORDING_VERSION:
            raise NotRecorded(f"{path} is of another version: {RECORD}")
        metadata = {key: MetadataAnswer(**answer) for key, answer in data.pop("metadata").items()}
        return cls(metadata=metadata, **data)

    def document(self) -> dict[str, Any]:
        metadata = {key: vars(answer) for key, answer in sorted(self.metadata.items())}
        return {"version": RECORDING_VERSION, **vars(self), "metadata": metadata}

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.document(), indent=1, ensure_ascii=False)
        path.write_text(text + "\n", encoding="utf-8")


@dataclass(frozen=True)
class Places:
    """Where the registry cargo resolved against lies (recorded, or replayed)."""

    registry: Path

    def placeholders(self, root: Path, document: dict[str, Any]) -> list[tuple[str, str]]:
        """Each path of this tree's answer and its placeholder, the longest path first."""
        named = {
            str(document.get("target_directory", "")): "{target}",
            str(document.get("build_directory", "")): "{target}",
            str(root): "{workspace}",
            str(root.resolve()): "{workspace}",
            str(self.registry): "{registry}",
            str(self.registry.resolve()): "{registry}",
        }
        pairs = [(json.dumps(path)[1:-1], mark) for path, mark in named.items() if path]
        return sorted(pairs, key=lambda pair: -len(pair[0]))

    def abstract(self, root: Path, stdout: str) -> str:
        for path, mark in self.placeholders(root, json.loads(stdout)):
            stdout = stdout.replace(path, mark)
        return stdout

    def concrete(self, root: Path, stdout: str) -> str:
        target = json.dumps(str(root / "target"))[1:-1]
        for mark, path in (("{target}", target), ("{workspace}", str(root))):
            stdout = stdout.replace(mark, json.dumps(path)[1:-1])
        return stdout.replace("{registry}", json.dumps(str(self.registry))[1:-1])


class RecordedCargo:
    """A MetadataSource that gives back a Recording's answers and starts no process."""

    def __init__(self, recording: Recording, places: Places, trust: TrustContext) -> None:
        self.recording = recording
        self.places = places
        self._trust = trust

    @property
    def checkout(self) -> Path:
        return self._trust.root

    @property
    def trust(self) -> TrustContext:
        return self._trust

    def start_metadata(
        self, manifest_path: Path, *, all_features: bool = False, features: tuple[str, ...] = ()
    ) -> PendingMetadata:
        root = manifest_path.parent
        key = question(root, all_features, features)
        answer = self.recording.metadata.get(key)
        if answer is None:
            raise NotRecorded(f"no cargo metadata recorded for {root} ({key}): {RECORD}")
        if answer.lockfile is not None:  # cargo writes the lockfile it resolved
            (root / "Cargo.lock").write_text(answer.lockfile, encoding="utf-8")
        stdout = self.places.concrete(root, answer.stdout)
        return PendingMetadata(lambda parse: parse(stdout))

    def host_triple(self) -> str:
        return _recorded(self.recording.host, "the host triple")

    def default_targets(self) -> list[str]:
        return [self.host_triple()]

    def host_cfg(self) -> TargetCfg:
        return TargetCfg.parse(self.host_triple(), _recorded(self.recording.host_cfg, "host cfg"))

    def target_cfg(self, triple: str) -> TargetCfg:
        text = _recorded(self.recording.target_cfg.get(triple), f"the cfg of {triple}")
        return TargetCfg.parse(triple, text)

    def unification(self, show: object) -> Unification:
        return PER_MEMBER


def _recorded(value: str | None, what: str) -> str:
    if value is None:
        raise NotRecorded(f"{what} was not recorded: {RECORD}")
    return value


class RecordingCargo:
    """A real CargoRunner whose every answer is written into a Recording."""

    def __init__(self, runner: CargoRunner, recording: Recording, places: Places) -> None:
        self.runner = runner
        self.recording = recording
        self.places = places

    @property
    def checkout(self) -> Path:
        return self.runner.checkout

    @property
    def trust(self) -> TrustContext:
        return self.runner.trust

    def start_metadata(
        self, manifest_path: Path, *, all_features: bool = False, features: tuple[str, ...] = ()
    ) -> PendingMetadata:
        root = manifest_path.parent
        key = question(root, all_features, features)
        lockfile = root / "Cargo.lock"
        before = lockfile.read_text(encoding="utf-8") if lockfile.exists() else None
        pending = self.runner.start_metadata(
            manifest_path, all_features=all_features, features=features
        )

        def answer(parse: Parse) -> Workspace:
            printed: list[str] = []

            def kept(text: str) -> Workspace:
                printed.append(text)
                return parse(text)

            workspace = pending.result(kept)
            after = lockfile.read_text(encoding="utf-8") if lockfile.exists() else None
            self.recording.metadata[key] = MetadataAnswer(
                self.places.abstract(root, printed[-1]), after if after != before else None
            )
            return workspace

        return PendingMetadata(answer, pending.cancel)

    def host_triple(self) -> str:
        self.recording.host = self.runner.host_triple()
        return self.recording.host

    def default_targets(self) -> list[str]:
        targets = self.runner.default_targets()
        self.recording.host = self.runner.host_triple()
        return targets

    def host_cfg(self) -> TargetCfg:
        cfg = self.runner.host_cfg()
        self.recording.host, self.recording.host_cfg = cfg.triple, cfg_text(cfg)
        return cfg

    def target_cfg(self, triple: str) -> TargetCfg:
        cfg = self.runner.target_cfg(triple)
        self.recording.target_cfg[triple] = cfg_text(cfg)
        return cfg

    def unification(self, show: object) -> Unification:
        unification = self.runner.unification(show)  # type: ignore[arg-type]
        if unification != PER_MEMBER:
            raise NotRecorded("a checkout that configures feature unification is not replayed")
        return unification
