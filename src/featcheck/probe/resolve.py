"""What the probe must reproduce: the backend crates the member builds, as cargo resolves them.

featcheck asks cargo (through the audit's hardened runner, which runs nothing of the checkout)
for the member's resolved graph on the host, and reads off burn-flex's version and features,
the features of the gemm crates below it (the matmul kernel: a feature set there, such as gemm's
own `rayon`, changes what runs), the burn version that selects Flex, the workspace's
Cargo.lock, and the optimisation settings of its release profile. Only data leaves the checkout.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from featcheck.boundary import MAX_LOCKFILE_BYTES, MAX_MANIFEST_BYTES, read_checkout_file
from featcheck.cargo.tree_text import TreeTextError, parse_tree_text
from featcheck.errors import FeatcheckError
from featcheck.fileio import lockfiles_kept
from featcheck.graph import DependencyGraph, Node
from featcheck.probe.programs import MATMUL, Program, program_for
from featcheck.workspace.cargo_metadata import parse_metadata
from featcheck.workspace.model import FEATURE, FeatureValue, Package
from featcheck.workspace.workspace import Workspace

if TYPE_CHECKING:
    from featcheck.cargo.runner import CargoRunner

BACKEND = "burn-flex"
FACADE = "burn"

# [profile.release] keys that change the code the probe times, and the values cargo accepts.
# Everything else (build-override, rustflags, debug info, ...) is left out: the probe copies
# data only, and none of the rest changes how fast a matmul runs.
_PROFILE_KEYS: dict[str, Callable[[object], bool]] = {
    "opt-level": lambda v: v in (0, 1, 2, 3, "0", "1", "2", "3", "s", "z"),
    "lto": lambda v: isinstance(v, bool) or v in ("fat", "thin", "off"),
    "codegen-units": lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 < v < 65536,
    "panic": lambda v: v in ("unwind", "abort"),
    "debug-assertions": lambda v: isinstance(v, bool),
    "overflow-checks": lambda v: isinstance(v, bool),
}


@dataclass(frozen=True)
class Pin:
    """A crate the probe depends on directly, at the member's version and exact features."""

    name: str
    version: str
    features: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.name} {self.version} [{','.join(self.features)}]"


@dataclass(frozen=True)
class BackendConfig:
    """Everything the probe's manifest and lockfile need to build what the member builds."""

    member: str
    target: str
    burn_version: str
    """Whose `flex` feature gives the probe its API (burn-flex's where the member has no burn)."""
    pins: tuple[Pin, ...]
    """burn-flex, the gemm crates below it, sorted, then burn-backend (whose traits it calls)."""
    lockfile: bytes | None = None
    """The workspace's Cargo.lock as the audit resolved it."""
    profile: dict[str, Any] = field(default_factory=dict)
    """The release profile's speed-relevant settings (see _PROFILE_KEYS)."""
    label: str = "current"

    @property
    def backend(self) -> Pin:
        return self.pins[0]


def backend_from_graph(graph: DependencyGraph, member: str, target: str) -> BackendConfig:
    """burn-flex and the gemm crates below it, as the member's resolved graph builds them."""
    # What the member links: a copy only a proc-macro uses is not timed (nor built alike).
    backends = [n for n in graph.named(BACKEND) if not n.host]
    if not backends:
        raise FeatcheckError(
            f"{member} does not build {BACKEND} (burn's CPU backend Flex) for {target}: "
            "there is nothing for the probe to time"
        )
    versions = sorted({n.version for n in backends})
    if len(backends) > 1:
        raise FeatcheckError(
            f"{member} builds {BACKEND} {len(backends)} times ({', '.join(versions)}, or with "
            "different features): the probe times one build; audit it with `featcheck` instead"
        )
    node = backends[0]
    linked = graph.target_side((node,)) - {node}
    below = sorted(n for n in linked if n.name == "gemm" or n.name.startswith("gemm-"))
    below += _used(graph, node, MATMUL)  # the crates whose traits the matmul program calls
    pins = [_pin(n) for n in (node, *below)]
    names = [p.name for p in pins]
    if len(names) != len(set(names)):
        raise FeatcheckError(
            f"{member} builds several versions of a gemm crate below {BACKEND}: "
            "the probe cannot pin them all"
        )
    facades = sorted(
        {n.version for n in graph.named(FACADE) if n.package.source is None},
        key=lambda v: (v != node.version, v),
    )
    return BackendConfig(member, target, facades[0] if facades else node.version, tuple(pins))


def pins_for(graph: DependencyGraph, crate: str, version: str) -> tuple[Pin, ...]:
    """A rule program's crate as the graph builds it, then those of `_used`."""
    nodes = [n for n in graph.named(crate) if n.version == version and not n.host]
    if len(nodes) != 1:
        raise FeatcheckError(
            f"cannot tell which build of {crate} {version} to time "
            f"({len(nodes)} in the member's graph)"
        )
    program = program_for(crate, version)
    used = _used(graph, nodes[0], program) if program is not None else []
    return (_pin(nodes[0]), *(_pin(node) for node in used))


def _used(graph: DependencyGraph, node: Node, program: Program) -> list[Node]:
    """The dependencies of `node` that its program calls as well (Program.uses)."""
    below = graph.dependencies(node)
    used = []
    for name in program.uses:
        found = [n for n in below if n.name == name and not n.host]
        if len(found) != 1:
            raise FeatcheckError(
                f"the probe of {node.name} {node.version} calls {name}, which it does not "
                f"depend on once in the member's graph ({len(found)} builds); the program is "
                f"written for {program.describe()}"
            )
        used.append(found[0])
    return used


def _pin(node: Node) -> Pin:
    if node.package.source is not None:
        raise FeatcheckError(
            f"{node.name} {node.version} comes from {node.package.source}, not a registry: "
            "the probe builds registry crates only"
        )
    return Pin(node.name, node.version, tuple(sorted(node.features)))


def enabling_features(table: dict[str, tuple[FeatureValue, ...]], feature: str) -> set[str]:
    """`feature` and every feature of the same crate that turns it on, directly or through
    another (lz4_flex's `default` turns on `safe-decode`)."""
    enabling = {feature}
    while more := {
        name
        for name, values in table.items()
        if name not in enabling
        and any(value.kind == FEATURE and value.name in enabling for value in values)
    }:
        enabling |= more
    return enabling


def release_profile(workspace_manifest: Path, checkout: Path | None = None) -> dict[str, Any]:
    """The speed-relevant `[profile.release]` settings of the workspace root's manifest (none
    where it cannot be read, or lies behind a link out of the `checkout`)."""
    try:
        raw = read_checkout_file(workspace_manifest, "Cargo.toml", MAX_MANIFEST_BYTES, checkout)
        document = tomlkit.parse(raw.decode("utf-8")).unwrap()
    except (FeatcheckError, UnicodeDecodeError, TOMLKitError):
        return {}
    table = document.get("profile", {})
    table = table.get("release", {}) if isinstance(table, dict) else {}
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if k in _PROFILE_KEYS and _PROFILE_KEYS[k](v)}


@dataclass(frozen=True)
class MemberGraph:
    """The member's resolved graph on the host, with what a probe build copies."""

    graph: DependencyGraph
    metadata: Workspace
    member: Package
    manifest: Path
    target: str
    lockfile: bytes | None
    profile: dict[str, Any]
    runner: CargoRunner
    """What resolved it, for the audit and fixes after (a fix's copy derives its trust)."""

    def config(
        self, pins: tuple[Pin, ...], burn_version: str = "", label: str = "current"
    ) -> BackendConfig:
        member, target = self.member.name, self.target
        return BackendConfig(member, target, burn_version, pins, self.lockfile, self.profile, label)


def read_tree(text: str, what: str = "cargo tree output") -> DependencyGraph:
    try:
        return parse_tree_text(text).graph
    except TreeTextError as error:
        raise FeatcheckError(f"could not read {what}: {error}") from None


def member_graph(runner: CargoRunner, manifest: Path, package: str | None) -> MemberGraph:
    """Resolve the member with the probe's `runner` (no code of the checkout runs; Cargo.lock
    is put back)."""
    checkout = runner.checkout
    with lockfiles_kept(manifest, checkout):
        metadata = runner.start_metadata(manifest).result(parse_metadata)
        # The one member to probe: `-p`, else the member whose manifest PATH names.
        members = list(metadata.members)
        names = sorted(m.name for m in members)
        if package:
            chosen = metadata.member_named(package)
            if chosen is None:
                raise FeatcheckError(
                    f"no workspace member named {package} (members: {', '.join(names)})"
                )
            members = [chosen]
        elif manifest.resolve() != (metadata.root / "Cargo.toml").resolve():
            members = [m for m in members if m.manifest_path.resolve() == manifest.resolve()]
        if len(members) != 1:
            raise FeatcheckError(
                "the probe times one member: choose it with -p MEMBER "
                f"(members: {', '.join(names) or 'none'})"
            )
        member = members[0]
        target = runner.host_triple()
        graph = read_tree(runner.tree(manifest, member.id, target))
        lock_path = metadata.root / "Cargo.lock"
        lockfile = (
            read_checkout_file(lock_path, "Cargo.lock", MAX_LOCKFILE_BYTES, checkout)
            if lock_path.is_file()
            else None
        )
    profile = release_profile(metadata.root / "Cargo.toml", checkout)
    return MemberGraph(graph, metadata, member, manifest, target, lockfile, profile, runner)


def matmul_config(resolved: MemberGraph, label: str = "current") -> BackendConfig:
    found = backend_from_graph(resolved.graph, resolved.member.name, resolved.target)
    return resolved.config(found.pins, found.burn_version, label)
