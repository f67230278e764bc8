"""Workspaces with configuration, for the policy tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from featcheck.errors import FeatcheckError
from featcheck.policy.load import load_config
from featcheck.policy.settings import Config
from featcheck.report import Finding, Location
from featcheck.severity import Severity

WORKSPACE = '[workspace]\nmembers = ["app", "lib"]\nresolver = "2"\n'


def write_member(root: Path, name: str, extra: str = "") -> Path:
    manifest = root / name / "Cargo.toml"
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(
        f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n' + extra
    )
    return manifest


def write_workspace(
    root: Path, extra: str = "", *, app: str = "", lib: str = ""
) -> dict[str, Path]:
    """A workspace of members app and lib; `extra` follows `[workspace]` in its manifest."""
    (root / "Cargo.toml").write_text(WORKSPACE + extra)
    return {"app": write_member(root, "app", app), "lib": write_member(root, "lib", lib)}


def config_error(root: Path, members: dict[str, Path] | None = None) -> FeatcheckError:
    with pytest.raises(FeatcheckError) as caught:
        load_config(root, members or {})
    return caught.value


def error_place(error: FeatcheckError) -> tuple[Path | str | None, int | None, int | None]:
    return error.path, error.line, error.column


def write_app(root: Path, dependencies: str, metadata: str = "") -> Path:
    """Member app's manifest: `metadata` after `[package]`, then `[dependencies]`."""
    return write_member(root, "app", metadata + "\n[dependencies]\n" + dependencies)


def configured_workspace(
    root: Path, metadata: str = "", app_deps: str = "", app_meta: str = ""
) -> Config:
    """The configuration of a workspace of app (see `write_app`) and lib."""
    members = write_workspace(root, metadata, app=app_meta + "\n[dependencies]\n" + app_deps)
    return load_config(root, members)


def make_finding(
    code: str = "FC001",
    *,
    member: str | None = "app",
    crate: str = "burn-flex",
    target: str | None = "x86_64-unknown-linux-gnu",
    file: str = "app/Cargo.toml",
    lines: tuple[int, int] | None = None,
    location_only: bool = False,
    severity: Severity = Severity.WARNING,
) -> Finding:
    """A finding whose declaration spans `lines` of `file` (no place when `lines` is None)."""
    location = declaration = None
    if lines is not None:
        first, last = lines
        location = Location(file, first, 1, first, 5)
        declaration = None if location_only else Location(file, first, 1, last, 2)
    return Finding(
        code=code,
        rule="some-rule",
        severity=severity,
        member=member,
        crate=crate,
        crate_version="0.22.1",
        feature="rayon",
        target=target,
        message=f"{crate} is built without `rayon`",
        location=location,
        declaration=declaration,
    )
