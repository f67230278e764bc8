"""Helpers shared by the tests of the CI integrations (github, sarif, action, pre-commit, cargo)."""

from __future__ import annotations

import subprocess

import pytest

from featcheck.report import Finding, Location, Severity

# Variables GitHub Actions sets that change what featcheck prints; tests set them explicitly.
ACTIONS_VARIABLES = (
    "GITHUB_ACTIONS",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_WORKSPACE",
    "GITHUB_SERVER_URL",
    "GITHUB_REPOSITORY",
    "GITHUB_SHA",
    "GITHUB_OUTPUT",
    "GITHUB_ACTION_PATH",
)


def clear_actions_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run as outside GitHub Actions, even when the suite itself runs in Actions."""
    for name in ACTIONS_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def host_triple() -> str:
    """The host target triple, which featcheck audits by default."""
    output = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    for line in output.splitlines():
        if line.startswith("host:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"rustc -vV did not name the host: {output!r}")


def make_finding(
    *,
    code: str = "FC001",
    rule: str = "flex-without-rayon",
    severity: Severity = Severity.ERROR,
    member: str | None = "app",
    crate: str = "burn-flex",
    crate_version: str = "0.22.1",
    feature: str = "rayon",
    target: str | None = "x86_64-unknown-linux-gnu",
    message: str = "burn-flex 0.22.1 is built without `rayon`: every matmul runs on one core",
    location: Location | None = None,
    suggestion: str = 'add "rayon" to the features of burn',
) -> Finding:
    """A synthetic finding, as the audit would produce it."""
    return Finding(
        code=code,
        rule=rule,
        severity=severity,
        member=member,
        crate=crate,
        crate_version=crate_version,
        feature=feature,
        target=target,
        message=message,
        location=location,
        why="why it matters",
        suggestion=suggestion,
    )


def manifest_location(line: int = 9, file: str = "Cargo.toml") -> Location:
    """A span on the burn line of a manifest."""
    return Location(file=file, line=line, column=31, end_line=line, end_column=55)
