"""Configuration and suppressions as a user meets them: through the CLI, on real projects."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from support import CRATES, WORKSPACES

pytestmark = pytest.mark.usefixtures("remembered_cargo")
"""featcheck's cargo answers an identical question (a project audited again with the same
configuration) from its first real answer (tests/cargo_memo.py)."""


def _copy(source: Path, tmp_path: Path) -> Path:
    project = tmp_path / source.name
    shutil.copytree(source, project)
    return project


def test_inline_allow_with_a_reason_silences_the_finding(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(WORKSPACES / "table-form")
    project = _copy(WORKSPACES / "table-form", tmp_path)
    manifest = project / "Cargo.toml"
    manifest.write_text(
        manifest.read_text().replace(
            '    # "rayon",',
            '    # "rayon",  # featcheck: allow(FC001, FC003) slower for 64x64 matrices',
        )
    )
    result = run_in_process(str(project), "--format", "json")
    assert result.returncode == 0, result.stdout
    report = json.loads(result.stdout)
    # FC001 suppressed, FC003 reports the missing `simd` (stages/finish.py): both allowed.
    assert report["findings"] == [] and report["suppressed"] == {"FC001": 1, "FC003": 1}
    assert "2 suppressed" in run_in_process(str(project)).stdout


def test_allow_entry_in_workspace_metadata_and_unused_entries_are_reported(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(WORKSPACES / "workspace-unification")
    project = _copy(WORKSPACES / "workspace-unification", tmp_path)
    manifest = project / "Cargo.toml"
    manifest.write_text(
        manifest.read_text()
        + "\n[workspace.metadata.featcheck]\n"
        + 'allow = [\n  { code = "FC001", member = "app", reason = "wasm only" },\n'
        + '  { code = "FC003", member = "app", reason = "wasm only" },\n'
        + '  { code = "FC004", reason = "stale" },\n]\n'
    )
    result = run_in_process(str(project), "--format", "json")
    report = json.loads(result.stdout)
    assert report["suppressed"] == {"FC001": 1, "FC003": 1}
    (unused,) = report["findings"]
    assert unused["code"] == "FC900" and unused["severity"] == "warning"
    assert unused["location"]["file"] == "Cargo.toml"
    assert "stale" in unused["message"]
    assert result.returncode == 1
    # As `ignore = ["FC900"]` in the configuration: the command line turns the report off.
    for ignore in ("FC900", "unused-suppression"):
        quiet = run_in_process(str(project), "--format", "json", "--ignore", ignore)
        assert quiet.returncode == 0, quiet.stderr
        assert json.loads(quiet.stdout)["findings"] == []
    refused = run_in_process(str(project), "--select", "FC900")
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == (
        "featcheck: error: FC900 (unused-suppression) is reported unless ignored; "
        "it cannot be selected\n"
    )


def test_featcheck_toml_sets_rules_targets_and_failing_level(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu-simd")
    project = _copy(CRATES / "pitb-exec-cpu-simd", tmp_path)
    (project / "featcheck.toml").write_text(
        'select = ["FC006"]\ntargets = ["aarch64-apple-darwin"]\nfail-on = "info"\n'
    )
    result = run_in_process(str(project), "--format", "json")
    report = json.loads(result.stdout)
    assert report["targets"] == ["aarch64-apple-darwin"]
    assert [f["code"] for f in report["findings"]] == ["FC006"]
    assert result.returncode == 1  # fail-on = "info"
    assert run_in_process(str(project), "--fail-on", "warning").returncode == 0


def test_unknown_configuration_key_is_an_error_at_its_place(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    project = _copy(CRATES / "pitb-exec-cpu", tmp_path)
    (project / "featcheck.toml").write_text('select = ["FC001"]\nfail_on = "error"\n')
    result = run_in_process(str(project))
    assert result.returncode == 2
    assert "featcheck.toml:2:1: " in result.stderr and "fail-on" in result.stderr
    assert "Traceback" not in result.stderr


def test_allow_without_reason_is_refused(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    project = _copy(CRATES / "pitb-exec-cpu", tmp_path)
    manifest = project / "Cargo.toml"
    text = manifest.read_text().replace('"optim"] }', '"optim"] }  # featcheck: allow(FC001)')
    manifest.write_text(text)
    result = run_in_process(str(project))
    assert result.returncode == 2
    assert "Cargo.toml:9:" in result.stderr and "reason" in result.stderr


def test_rules_command_lists_the_catalogue_and_explains_one(offline_cargo: object) -> None:
    listing = run_in_process("rules")
    assert listing.returncode == 0
    codes = [line.split()[0] for line in listing.stdout.splitlines()[1:]]  # after the heading
    assert codes[0] == "FC001" and "FC010" in codes and codes[-1] == "FC900"
    one = run_in_process("rule", "flex-without-rayon")
    assert one.stdout.startswith("# FC001 `flex-without-rayon`")
    assert "21.4 ms" in one.stdout
    assert run_in_process("rule", "FC999").returncode == 2


def test_inline_allow_on_the_members_inheriting_line(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(WORKSPACES / "workspace-inheritance")
    project = _copy(WORKSPACES / "workspace-inheritance", tmp_path)
    manifest = project / "trainer" / "Cargo.toml"
    manifest.write_text(
        manifest.read_text().replace(
            '"autodiff"] }', '"autodiff"] }  # featcheck: allow(FC001) embedded target'
        )
    )
    report = json.loads(run_in_process(str(project), "--format", "json").stdout)
    assert report["suppressed"] == {"FC001": 1}
    assert {f["code"] for f in report["findings"]} == {"FC003"}  # server's, untouched


def test_settings_and_comments_of_members_without_findings_still_count(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(WORKSPACES / "workspace-unification")
    # Only manifests that cargo's metadata shows with a featcheck table, or whose text holds a
    # `# featcheck:` directive, are parsed: the others must still be checked.
    project = _copy(WORKSPACES / "workspace-unification", tmp_path)
    app = project / "app" / "Cargo.toml"
    ignore = '\n[package.metadata.featcheck]\nignore = ["FC001", "FC003"]\n'
    app.write_text(app.read_text() + ignore)
    bench = project / "bench" / "Cargo.toml"
    clean = bench.read_text()
    assert run_in_process(str(project)).returncode == 0  # app's own settings apply
    bench.write_text(clean.replace("edition", 'metadata.featcheck.fail-on = "x"\nedition'))
    result = run_in_process(str(project))
    assert result.returncode == 2 and "bench/Cargo.toml:4:30: `fail-on`" in result.stderr
    bench.write_text(clean + "# featcheck: allow(FC001)\n")
    result = run_in_process(str(project))
    assert result.returncode == 2 and "bench/Cargo.toml:9:1: " in result.stderr
    assert "needs a reason" in result.stderr
    bench.write_text(clean + "# featcheck: allow(FC001) bench builds\n")
    result = run_in_process(str(project), "--format", "json")
    (unused,) = json.loads(result.stdout)["findings"]
    assert unused["code"] == "FC900" and unused["location"]["file"] == "bench/Cargo.toml"


def test_allow_entries_naming_what_does_not_exist_are_fc900_at_their_line(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    # Only app is audited: an entry for a member that is merely not audited (bench) and one
    # for a target that is merely not audited stay silent; typos do not.
    offline_cargo_for(WORKSPACES / "workspace-unification")
    project = _copy(WORKSPACES / "workspace-unification", tmp_path)
    (project / "featcheck.toml").write_text(
        '[[allow]]\ncode = "FC003"\nmember = "bench"\nreason = "not audited"\n\n'
        '[[allow]]\ncode = "FC003"\ntarget = "wasm32-unknown-unknown"\nreason = "not audited"\n\n'
        '[[allow]]\ncode = "FC001"\nmember = "ap"\nreason = "typo"\n\n'
        '[[allow]]\ncode = "FC001"\ncrate = "burn-flx"\nreason = "typo"\n\n'
        '[[allow]]\ncode = "FC001"\ntarget = "wasm32-unknown-unkown"\nreason = "typo"\n'
    )
    result = run_in_process(str(project), "-p", "app", "--format", "json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    unused = sorted(
        (f["location"]["line"], f["message"]) for f in report["findings"] if f["code"] == "FC900"
    )
    assert unused == [
        (
            11,
            "this suppression of FC001 for member ap (reason: typo) can never match: "
            "no workspace member is named ap (members: app, bench)",
        ),
        (
            16,
            "this suppression of FC001 for crate burn-flx (reason: typo) can never match: "
            "no crate named burn-flx is in the dependency graph",
        ),
        (
            21,
            "this suppression of FC001 for target wasm32-unknown-unkown (reason: typo) can "
            "never match: rustc knows no target wasm32-unknown-unkown",
        ),
    ]
    assert {f["member"] for f in report["findings"] if f["code"] == "FC900"} == {None}
    text = run_in_process(str(project), "-p", "app").stdout
    assert "featcheck.toml:11:1" in text and "FC001 for member ap" in text


def test_a_run_that_audited_nothing_never_says_no_findings(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(WORKSPACES / "workspace-unification")
    project = _copy(WORKSPACES / "workspace-unification", tmp_path)
    (project / "featcheck.toml").write_text(
        '[[allow]]\ncode = "*"\nmember = "app"\nreason = "a stale one is not news here"\n'
    )
    result = run_in_process(str(project), "-F", "nope")
    assert result.returncode == 2
    assert "no findings" not in result.stdout and "FC900" not in result.stdout
    assert result.stdout.startswith("no verdict: no build configuration could be audited")
    assert "none of the selected packages contains this feature: nope" in result.stderr
    report = json.loads(run_in_process(str(project), "-F", "nope", "--format", "json").stdout)
    assert report["no_verdict"] == ["no build configuration could be audited"]
