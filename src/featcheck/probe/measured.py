"""What `featcheck probe --rule` measured, kept for `featcheck --measured`.

Each probe's result is kept in the probe's cache directory (`measured.json`), by rule, crate,
version and target, the newest measurement winning. `featcheck --measured` attaches it to each
finding it covers, and says of the others that the number is the rule's own, measured on
featcheck's build machine, and which command measures it here. The cache must lie outside the
audited checkout (as the probe's builds must): a checkout could otherwise plant a measurement.
"""

from __future__ import annotations

import datetime
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from featcheck.boundary import TrustContext
from featcheck.errors import FeatcheckError
from featcheck.fileio import read_regular_file, write_atomic
from featcheck.probe.cache import cache_root
from featcheck.probe.programs import program_timing
from featcheck.report import AuditResult, Cost, Finding

if TYPE_CHECKING:  # the audit's --measured reads this module without the probe's machinery
    from featcheck.probe.member import MemberProbeReport

FILE = "measured.json"
_LIMIT = 4 * 1024 * 1024


def _key(code: str, crate: str, version: str, target: str | None) -> str:
    return f"{code} {crate} {version} {target or ''}"


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_regular_file(path, "measurement file", _LIMIT))
    except (FeatcheckError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record(report: MemberProbeReport, trust: TrustContext) -> None:
    """Keep every rule probe's result in `report` whose builds computed the same thing."""
    path = cache_root(trust) / FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    kept = _read(path) if path.is_file() else {}
    today = datetime.date.today().isoformat()
    for result in report.rules or ():
        if not result.agree:
            continue
        finding = result.finding
        best = result.headline
        kept[_key(finding.code, finding.crate, finding.crate_version, report.target)] = {
            "ratio": round(best.ratio, 3),
            "workload": best.name,
            "measured_on": today,
            "features": list(result.current.backend.features),
        }
    write_atomic(path, (json.dumps(kept, indent=1, sort_keys=True) + "\n").encode())


def attach(result: AuditResult, trust: TrustContext) -> AuditResult:
    """`result` with each finding the probe can time carrying its cost: measured here where
    the cache has it (a cache the checkout cannot have written, `trust`), else quoted."""
    try:
        path = cache_root(trust) / FILE
    except FeatcheckError as error:
        result.notes.append(f"--measured: no measurement is read: {error.message}")
        return result
    kept = _read(path) if os.path.isfile(path) else {}
    findings = [_with_cost(finding, kept) for finding in result.findings]
    return replace(result, findings=findings)


def _with_cost(finding: Finding, kept: dict[str, Any]) -> Finding:
    if program_timing(finding.crate, finding.crate_version, finding.feature) is None:
        return finding
    command = f"featcheck probe --rule {finding.code}"
    entry = kept.get(_key(finding.code, finding.crate, finding.crate_version, finding.target))
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
