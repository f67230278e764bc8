"""A rule probe's crate in the cache: the program, and a manifest that pins the crate to the
member's version with exactly the features of one build, next to the member's Cargo.lock."""

from __future__ import annotations

import hashlib
from pathlib import Path

from featcheck.probe.build import ProbeBuilder
from featcheck.probe.cache import CACHE_VERSION, binary_name, write_if_changed
from featcheck.probe.compile import Toolset
from featcheck.probe.manifest import (
    dependency_line,
    package_head,
    release_and_workspace,
    toml_array,
    toml_key,
)
from featcheck.probe.resolve import BackendConfig
from featcheck.probe.rules.programs import Program, program_for

PACKAGE = "featcheck-rule-probe"


def render_manifest(config: BackendConfig, program: Program, bin_name: str) -> str:
    """The manifest of the probe of `config`'s one pinned crate, building `bin_name`."""
    return "\n".join(
        [
            *package_head(
                "`featcheck probe --rule`; rewritten on every probe of this build",
                PACKAGE,
                config,
                bin_name,
            ),
            *_features(config, program),
            "[dependencies]",
            *(dependency_line(pin.name, pin.version, pin.features) for pin in config.pins),
            "",
            *release_and_workspace(config),
        ]
    )


def _features(config: BackendConfig, program: Program) -> list[str]:
    """The probe crate's own features, for a program that tests the crate's features with
    `cfg`: each declared, on by default exactly when the pinned crate has it (so that cargo
    builds the program's code for that API, and nothing else changes)."""
    if not program.cfg_features:
        return []
    return [
        "[features]",
        f"default = {toml_array(program.probe_features(config.backend.features))}",
        *(f"{toml_key(feature)} = []" for feature in sorted(program.cfg_features)),
        "",
    ]


def _key(config: BackendConfig, program: Program, toolset: Toolset) -> str:
    """A hash of everything that makes a different binary: the program, the crate's version
    and features, the lockfile, the compiler (and so the host)."""
    digest = hashlib.sha256(f"featcheck-rule-probe {CACHE_VERSION}\n".encode())
    for name, content in program.sources().items():
        digest.update(f"{name} {len(content)}\n".encode() + content)
    digest.update(render_manifest(config, program, "").encode())
    digest.update(config.lockfile or b"<no lockfile>")
    digest.update(toolset.rustc_version.encode())
    return "rule-" + digest.hexdigest()[:16]


class RuleProbeBuilder(ProbeBuilder):
    """ProbeBuilder for rule probes: the same verification, statement, build and cache, with
    the crate written from the rule's program."""

    package = PACKAGE

    def prepare(self, config: BackendConfig, *, mlp: bool) -> tuple[Path, str]:
        program = program_for(config.backend.name, config.backend.version)
        if program is None:
            raise ValueError(f"no probe program for {config.backend.name}")
        key = _key(config, program, self.toolset)
        directory = self.root / key
        for name, content in program.sources().items():
            (directory / name).parent.mkdir(parents=True, exist_ok=True)
            write_if_changed(directory / name, content)
        manifest = render_manifest(config, program, binary_name(key))
        write_if_changed(directory / "Cargo.toml", manifest.encode())
        if config.lockfile is not None and not (directory / "Cargo.lock").exists():
            write_if_changed(directory / "Cargo.lock", config.lockfile)
        return directory, key
