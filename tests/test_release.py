"""The release: one pushed version tag builds, smoke-tests and publishes featcheck, with no token.

The workflow (.github/workflows/release.yml) is read as GitHub reads it; the release notes and the
version are checked through the scripts and the build a release runs."""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import REPO

WORKFLOW = REPO / ".github" / "workflows" / "release.yml"
PUBLISH_ACTION = "pypa/gh-action-pypi-publish@"
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def _workflow() -> dict[Any, Any]:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    assert isinstance(workflow, dict)
    return workflow


def _jobs_running(text: str) -> list[str]:
    return [name for name, job in _workflow()["jobs"].items() if text in _job_text(job)]


def _job_text(job: dict[str, Any]) -> str:
    return yaml.safe_dump(job, width=1000)


def _needs(job: str) -> set[str]:
    """Every job `job` waits for, directly or through another."""
    jobs = _workflow()["jobs"]
    direct = jobs[job].get("needs", [])
    waited = set([direct] if isinstance(direct, str) else direct)
    for other in list(waited):
        waited |= _needs(other)
    return waited


def test_a_release_starts_only_from_a_version_tag() -> None:
    triggers = _workflow()[True]  # YAML 1.1 reads the key `on` as true, as PyYAML does
    assert list(triggers) == ["push"]
    assert list(triggers["push"]) == ["tags"]
    patterns = triggers["push"]["tags"]
    matches = {tag: any(fnmatch.fnmatchcase(tag, p) for p in patterns) for tag in _TAGS}
    assert matches == _TAGS


# A version tag releases; the Action's moving major tag and other names do not.
_TAGS = {"v0.1.0": True, "v1.2.0rc1": True, "v0": False, "v1": False, "latest": False}


def test_only_the_publish_job_can_ask_for_an_identity_token() -> None:
    workflow = _workflow()
    assert workflow["permissions"] == {}
    [publish] = _jobs_running(PUBLISH_ACTION)
    for name, job in workflow["jobs"].items():
        permissions = job["permissions"]
        if name == publish:
            assert permissions == {"id-token": "write"}
        else:
            assert "id-token" not in permissions
            assert set(permissions.values()) <= {"read", "write"}
    assert workflow["jobs"][publish]["environment"]["name"] == "pypi"


def test_the_files_are_built_once_and_published_after_the_wheels_smoke_test() -> None:
    [build] = _jobs_running("smoke_wheel.py build")
    [smoke] = _jobs_running("smoke_wheel.py test")
    [publish] = _jobs_running(PUBLISH_ACTION)
    [release] = _jobs_running("gh release create")
    assert {build, smoke} <= _needs(publish)
    assert publish in _needs(release)
    smoke_command = _job_text(_workflow()["jobs"][smoke])
    assert '--version "$VERSION"' in smoke_command
    assert "VERSION: ${{ needs.build.outputs.version }}" in smoke_command
    # The smoke test and the publisher take the build job's files; none builds its own.
    for job in (smoke, publish, release):
        assert "python -m build" not in _job_text(_workflow()["jobs"][job])
        assert "actions/download-artifact@" in _job_text(_workflow()["jobs"][job])


def test_no_secret_or_token_is_named_anywhere() -> None:
    text = WORKFLOW.read_text()
    assert "secrets." not in text
    assert "password" not in text and "api-token" not in text
    [publish] = _jobs_running(PUBLISH_ACTION)
    [step] = [s for s in _workflow()["jobs"][publish]["steps"] if PUBLISH_ACTION in s["uses"]]
    assert "with" not in step  # trusted publishing: no user, no password
    # The release job's own token (contents: write) creates the release and moves the major tag.
    assert _jobs_running("github.token") == _jobs_running("gh release create")


def test_every_action_is_pinned_by_a_commit_with_its_version_named() -> None:
    lines = [line.strip() for line in WORKFLOW.read_text().splitlines()]
    uses = [line for line in lines if line.startswith(("uses:", "- uses:"))]
    assert uses
    for line in uses:
        assert re.fullmatch(r"(- )?uses: [\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+", line)


def test_ci_builds_and_smoke_tests_the_wheel_before_the_readmes_test_command() -> None:
    run = (REPO / ".ci" / "run").read_text().splitlines()
    assert ".venv/bin/python scripts/smoke_wheel.py" in run
    readme = (REPO / "README.md").read_text().splitlines()
    [readme_test_command] = [line for line in readme if line.endswith("&& .venv/bin/pytest")]
    assert run[-1] == readme_test_command


def _release_notes(*arguments: str) -> subprocess.CompletedProcess[str]:
    script = REPO / "scripts" / "release_notes.py"
    return subprocess.run(
        [sys.executable, str(script), *arguments], capture_output=True, text=True, check=False
    )


def test_the_notes_are_the_versions_changelog_section(tmp_path: Path) -> None:
    changelog = tmp_path / "CHANGELOG.md"
    changelog.write_text(
        "# Changelog\n\n## [Unreleased]\n\n## [0.2.0] - 2026-12-01\n\n### Fixed\n\n- a fix\n\n"
        "## [0.1.0] - 2026-11-01\n\n- the first\n\n"
        "[Unreleased]: https://example.com/a\n[0.2.0]: https://example.com/b\n"
    )
    assert _release_notes("0.2.0", str(changelog)).stdout == "### Fixed\n\n- a fix\n"
    assert _release_notes("0.1.0", str(changelog)).stdout == "- the first\n"
    for missing in ("0.3.0", "Unreleased", "0.2"):
        done = _release_notes(missing, str(changelog))
        assert done.returncode == 1
        assert done.stdout == ""
        assert done.stderr == (
            f"{changelog}: no section '## [{missing}]' with notes: move [Unreleased] under it"
            " (with the date) and tag that commit\n"
        )


def test_the_changelog_has_notes_waiting_for_the_next_release() -> None:
    notes = _release_notes("Unreleased").stdout
    assert notes.startswith("The first release")
    assert "featcheck rules" in notes


@pytest.mark.network
def test_a_tag_is_the_version_of_an_archive_the_action_is_installed_from(tmp_path: Path) -> None:
    """GitHub downloads an action as `git archive` output: .git_archival.txt carries the tag,
    and the Action's moving major tag on the same commit is no version. Needs PyPI: the build's
    own requirements (setuptools, setuptools-scm) are installed as `pip install` does."""
    repository = tmp_path / "repository"
    for name in ("pyproject.toml", "README.md", "LICENSE-MIT", "LICENSE-APACHE"):
        (repository / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, repository / name)
    for name in (".gitattributes", ".git_archival.txt"):
        shutil.copy2(REPO / name, repository / name)
    shutil.copytree(
        REPO / "src",
        repository / "src",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "_version.py"),
    )
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "r"], ["tag", "v9.8.7"]):
        _git(repository, *command)
    _git(repository, "tag", "-a", "v9", "-m", "the Action's major tag")
    archive = tmp_path / "archive.tar"
    _git(repository, "archive", "--prefix=featcheck/", "-o", str(archive), "HEAD")
    with tarfile.open(archive) as opened:
        opened.extractall(tmp_path / "unpacked", filter="data")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path / "dist")],
        cwd=tmp_path / "unpacked" / "featcheck",
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    [wheel] = (tmp_path / "dist").glob("*.whl")
    assert wheel.name == "featcheck-9.8.7-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as opened:
        assert '__version__ = "9.8.7"' in opened.read("featcheck/_version.py").decode()


def _git(repository: Path, *arguments: str) -> None:
    subprocess.run(
        ["git", "-C", str(repository), *arguments],
        env={**os.environ, **GIT_IDENTITY},
        check=True,
        capture_output=True,
    )
