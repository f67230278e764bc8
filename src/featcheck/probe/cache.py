"""Where the probe is built, once per configuration: cached by everything that shapes it, under
the user's cache directory, beside `measured.json` for `featcheck --measured` (README, "Measuring
it on this machine": the layout and the key). The cache must lie outside the audited checkout: a
checkout could otherwise plant a probe "built before", run as featcheck's own, or a measurement.

The generated Cargo.toml depends on the program's crates, each pinned to the member's version
with `default-features = false` and exactly the member's resolved features, so that cargo's
feature unification gives them the member's feature set, no more and no less (checked with
cargo tree before building); it copies the member's release speed settings.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from featcheck.boundary import TrustContext, read_regular_file, user_cache_directory
from featcheck.errors import FeatcheckError
from featcheck.fileio import write_atomic
from featcheck.manifest.spans import BARE_KEY
from featcheck.probe.programs import Program, program_timing
from featcheck.report import AuditResult, Cost, Finding

if TYPE_CHECKING:
    from featcheck.probe.compile import Toolset
    from featcheck.probe.member import ProbeReport
    from featcheck.probe.resolve import BackendConfig

PACKAGE = "featcheck-probe"
CACHE_VERSION = "2"
"""2: every probe is a program of probe/rules/programs/, the matmul's built on burn-flex."""
_FLAG_VARIABLES = ("RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS")
MEASURED = "measured.json"
_MEASURED_LIMIT = 4 * 1024 * 1024


def cache_root(trust: TrustContext) -> Path:
    """$XDG_CACHE_HOME/featcheck/probe, or ~/.cache/featcheck/probe: never inside the checkout
    (`trust`), where a planted "probe built before" would be run as featcheck's own, and
    cargo would obey the checkout's configuration from the probe's directory upward."""
    if trust.cache is not None:
        return trust.cache / "probe"
    directory = user_cache_directory(os.environ)  # only to say why there is none
    if directory is None:
        raise FeatcheckError("no cache directory for the probe: set XDG_CACHE_HOME or HOME")
    raise FeatcheckError(
        "featcheck's cache directory lies inside the audited checkout: the probe builds "
        "and runs nothing kept there; set XDG_CACHE_HOME outside the checkout",
        path=directory,
    )


def cache_key(config: BackendConfig, program: Program, toolset: Toolset) -> str:
    """`rustc -vV` stands for the compiler and so the host."""
    digest = hashlib.sha256(f"featcheck-probe-cache {CACHE_VERSION}\n".encode())
    for name, content in program.sources().items():
        digest.update(f"{name} {len(content)}\n".encode() + content)
    digest.update(render_manifest(config, program, PACKAGE).encode())
    digest.update(config.lockfile or b"<no lockfile>")
    digest.update(toolset.rustc_version.encode())
    for variable in _FLAG_VARIABLES:
        digest.update(f"{variable}={toolset.environment.get(variable, '')}\n".encode())
    return digest.hexdigest()[:16]


def binary_name(key: str) -> str:
    return f"{PACKAGE}-{key}"


def executable(name: str) -> str:
    return name + (".exe" if os.name == "nt" else "")


def write_if_changed(path: Path, content: bytes) -> None:
    with contextlib.suppress(OSError):
        if path.read_bytes() == content:
            return
    temporary = path.with_name(path.name + f".{os.getpid()}.tmp")
    temporary.write_bytes(content)
    os.replace(temporary, path)


# The manifest's values are written as JSON (ASCII only): a JSON string, integer, boolean or
# array of strings is the same value in TOML.


def _toml_key(name: str) -> str:
    return name if BARE_KEY.fullmatch(name) else json.dumps(name)


def render_manifest(config: BackendConfig, program: Program, bin_name: str) -> str:
    pinned = {pin.name for pin in config.pins}
    return "\n".join(
        [
            "# Written by `featcheck probe`; rewritten on every probe of this build.",
            f"# Reproduces {config.member}'s build of {config.backend} ({config.target}).",
            "[package]",
            f"name = {json.dumps(PACKAGE)}",
            'version = "0.1.0"',
            'edition = "2021"',
            "publish = false",
            "",
            "[[bin]]",
            f"name = {json.dumps(bin_name)}",
            'path = "src/main.rs"',
            "",
            *_features(config, program),
            "[dependencies]",
            *(
                f"{_toml_key(pin.name)} = {{ version = {json.dumps('=' + pin.version)}, "
                f"default-features = false, features = {json.dumps(list(pin.features))} }}"
                for pin in config.pins
            ),
            "",
            "[profile.release]",
            "debug = false",
            *(
                # A number or boolean as it is, anything else as a string.
                f"{key} = {json.dumps(value if isinstance(value, int) else str(value))}"
                for key, value in sorted(config.profile.items())
            ),
            "",
            # The program's cold crates (none it pins) and the pinned crates it only passes
            # through unoptimised, in 256 codegen units (cargo's for unoptimised builds): a first
            # build takes less, and no kernel's code changes (`Program.cold`, `Program.thin`).
            *(
                line
                for name in sorted(set(program.cold) - pinned | set(program.thin))
                for line in (
                    f"[profile.release.package.{_toml_key(name)}]",
                    "opt-level = 0",
                    "codegen-units = 256",
                    "",
                )
            ),
            "# Keep the probe out of any workspace above it.",
            "[workspace]",
            "",
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
        f"default = {json.dumps(sorted(set(program.cfg_features) & set(config.backend.features)))}",
        *(f"{_toml_key(feature)} = []" for feature in sorted(program.cfg_features)),
        "",
    ]


# --- what the rule probes measured, for `featcheck --measured` ---------------------------------


def measured_key(code: str, crate: str, version: str, target: str | None) -> str:
    return f"{code} {crate} {version} {target or ''}"


def read_measured(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_regular_file(path, "measurement file", _MEASURED_LIMIT))
    except (FeatcheckError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def attach(result: AuditResult, trust: TrustContext) -> AuditResult:
    """`result` with each finding the probe can time carrying its cost: measured here where
    the cache has it (a cache the checkout cannot have written, `trust`), else quoted."""
    try:
        path = cache_root(trust) / MEASURED
    except FeatcheckError as error:
        result.notes.append(f"--measured: no measurement is read: {error.message}")
        return result
    kept = read_measured(path)
    return replace(result, findings=[_with_cost(finding, kept) for finding in result.findings])


def _with_cost(finding: Finding, kept: dict[str, Any]) -> Finding:
    if program_timing(finding.crate, finding.crate_version, finding.feature) is None:
        return finding
    command = f"featcheck probe --rule {finding.code}"
    entry = kept.get(
        measured_key(finding.code, finding.crate, finding.crate_version, finding.target)
    )
    if not isinstance(entry, dict) or not isinstance(entry.get("ratio"), (int, float)):
        return replace(finding, cost=Cost(False, command))
    cost = Cost(
        True,
        command,
        float(entry["ratio"]),
        str(entry.get("workload", "")),
        str(entry.get("measured_on", "")),
        tuple(str(f) for f in entry.get("features", []) if isinstance(f, str)),
    )
    return replace(finding, cost=cost)


def record(report: ProbeReport, trust: TrustContext) -> None:
    """Keep, for `featcheck --measured`, every rule probe's result in `report` whose builds
    computed the same thing (`attach` reads them back)."""
    path = cache_root(trust) / MEASURED
    path.parent.mkdir(parents=True, exist_ok=True)
    kept = read_measured(path)
    today = datetime.date.today().isoformat()
    for result in [result for result in report.rules or () if result.agree]:
        finding, best = result.finding, result.headline
        kept[measured_key(finding.code, finding.crate, finding.crate_version, report.target)] = {
            "ratio": round(best.ratio, 3),
            "workload": best.name,
            "measured_on": today,
            "features": list(result.current.config.backend.features),
        }
    write_atomic(path, (json.dumps(kept, indent=1, sort_keys=True) + "\n").encode())
