"""The manifest-only audit: what the members' own manifests show when dependencies are missing.

When a registry package of the lockfile has no manifest in the local cargo registry or vendor/,
features cannot be resolved. The members' own declarations are still checked: a direct `burn`
dependency with `default-features = false` and `flex` but no `rayon` among its features builds
burn's Flex backend without rayon (FC001). Those findings carry `confidence="manifest-only"`;
nothing that needs the dependencies' feature tables can be found this way.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from featcheck.audit import AuditOptions
from featcheck.errors import FeatcheckError
from featcheck.manifest.document import read_manifest
from featcheck.noexec.metadata import declarations_of, discover_workspace, find_missing
from featcheck.noexec.metadata import lock_packages as read_lock_packages
from featcheck.noexec.targets import builtin_cfg, detect_host_triple
from featcheck.report import AuditResult, Finding, Location
from featcheck.rules import select_rules

MANIFEST_ONLY = "manifest-only"


def manifest_only_audit(manifest: Path, options: AuditOptions) -> AuditResult | None:
    """The manifest-only audit when dependency manifests are missing; None when none is (the
    full --no-exec audit then applies)."""
    missing = find_missing(manifest, os.environ)
    if not missing:
        return None
    root_manifest, member_manifests = discover_workspace(manifest)
    if manifest.resolve() != root_manifest.resolve():
        member_manifests = [m for m in member_manifests if m.resolve() == manifest.resolve()]
    names = {m: str(read_manifest(m).get("package", "name")) for m in member_manifests}
    if options.packages:
        unknown = [p for p in options.packages if p not in names.values()]
        if unknown:
            raise FeatcheckError(f"no workspace member named {', '.join(unknown)}")
        member_manifests = [m for m in member_manifests if names[m] in options.packages]
    if not member_manifests:
        raise FeatcheckError("no workspace member to audit here", path=manifest)
    targets = list(options.targets) or [detect_host_triple()]
    cfgs = [builtin_cfg(t) for t in targets]
    root = manifest.parent
    shown = ", ".join(missing[:10]) + (
        f" and {len(missing) - 10} more" if len(missing) > 10 else ""
    )
    note = (
        f"manifest-only audit: no manifest in the local cargo registry or vendor/ for {shown}; "
        "only the members' own declarations were checked (run `cargo fetch` once for a full "
        "audit, or drop --no-exec)"
    )
    result = AuditResult(
        root, members=[names[m] for m in member_manifests], targets=targets, notes=[note]
    )
    rule = next(
        (r for r in select_rules(options.select, options.ignore) if r.code == "FC001"), None
    )
    if rule is None:
        return result
    versions = {str(p["name"]): str(p["version"]) for p in read_lock_packages(manifest)}
    version = versions.get("burn-flex") or versions.get("burn", "")
    suggestion = "add `rayon` to burn's features"
    if versions.get("burn", "").startswith("0.21."):
        suggestion = (
            "burn 0.21 has no `rayon` feature: drop `default-features = false`, or depend on "
            'burn-flex directly with `features = ["rayon"]`'
        )
    for member in member_manifests:
        for cfg in cfgs:
            for decl in declarations_of(member):
                if not _flex_without_rayon(decl) or not _applies(cfg.applies, decl["target"]):
                    continue
                result.findings.append(
                    Finding(
                        code=rule.code,
                        rule=rule.name,
                        severity=rule.severity,
                        member=names[member],
                        crate="burn-flex",
                        crate_version=version,
                        feature="rayon",
                        target=cfg.triple,
                        message=(
                            f"{names[member]} declares burn with `default-features = false` "
                            "and `flex` but not `rayon`: burn-flex is built without `rayon`, "
                            "so every matmul runs on one core"
                        ),
                        location=_location(member, root, decl),
                        why=rule.why,
                        suggestion=suggestion,
                        notes=(
                            "read from the manifest alone: the dependencies' manifests are not "
                            "on this machine, so the resolved features were not checked",
                        ),
                        confidence=MANIFEST_ONLY,
                    )
                )
    return result


def _flex_without_rayon(decl: dict[str, Any]) -> bool:
    return (
        decl["name"] == "burn"
        and decl["kind"] is None
        and not decl["uses_default_features"]
        and "flex" in decl["features"]
        and "rayon" not in decl["features"]
    )


def _applies(applies: Any, platform: str | None) -> bool:
    try:
        return bool(applies(platform))
    except ValueError:
        return True


def _location(member: Path, root: Path, decl: dict[str, Any]) -> Location | None:
    document = read_manifest(member)
    table: tuple[str, ...] = ("dependencies",)
    if decl["target"] is not None:
        table = ("target", decl["target"], "dependencies")
    key = decl["rename"] or decl["name"]
    entry = document.entry((*table, key, "default-features")) or document.entry((*table, key))
    if entry is None:
        return None
    end = entry.value or entry.key
    return Location(
        file=os.path.relpath(member, root).replace(os.sep, "/"),
        line=entry.key.line,
        column=entry.key.column,
        end_line=end.end_line,
        end_column=end.end_column,
        source_line=document.line_text(entry.key.line),
    )
