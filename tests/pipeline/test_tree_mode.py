"""`featcheck --tree`: saved cargo tree text, the workflow of CI logs and of the measurement."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_in_process import run_in_process
from support import TREES

from featcheck.rules import builtin_rules


def _audit(name: str) -> tuple[int, dict[str, Any]]:
    result = run_in_process("--tree", str(TREES / name), "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def test_inverted_tree_from_stdin_finds_what_the_project_audit_finds() -> None:
    text = (TREES / "pitb-exec-cpu.invert-burn-flex.txt").read_text()
    result = run_in_process("--tree", "-", stdin=text)
    assert result.returncode == 1
    assert "pitb-exec-cpu" in result.stdout
    assert "error[FC001] burn-flex 0.22.1 is built without `rayon`" in result.stdout


def test_fast_build_is_clean() -> None:
    code, report = _audit("pitb-exec-cpu-simd.invert-burn-flex.txt")
    assert code == 0 and report["findings"] == []


def test_findings_from_tree_text_have_no_location_or_target() -> None:
    _, report = _audit("pitb-exec-cpu.normal.indent.txt")
    (finding,) = report["findings"]
    assert finding["member"] == "pitb-exec-cpu"
    assert finding["location"] is None and finding["target"] is None
    assert "run featcheck on the project" in finding["suggestion"]


def test_depth_zero_tree_says_what_it_cannot_tell() -> None:
    code, report = _audit("pitb-exec-cpu.invert-burn-flex.depth0.txt")
    (finding,) = report["findings"]
    assert code == 1
    assert finding["member"] is None
    assert any("cannot tell which member" in note for note in finding["notes"])
    assert any("cannot tell whether it is the selected backend" in n for n in finding["notes"])


def test_default_edges_are_reported_as_a_hole() -> None:
    # The dev-dependency's rayon is unified into this tree: the build itself lacks it.
    code, report = _audit("dev-only-rayon.all-edges.txt")
    assert "FC001" not in {f["code"] for f in report["findings"]}
    assert any("cargo tree -e normal" in note for note in report["notes"])
    code, report = _audit("dev-only-rayon.normal.txt")
    assert code == 1


def test_workspace_root_tree_is_never_clean() -> None:
    # cargo unified app (no rayon) with bench (defaults): the tree shows rayon for both.
    result = run_in_process("--tree", str(TREES / "workspace-unification.root.txt"))
    assert result.returncode == 2
    assert "no findings" not in result.stdout
    assert "note: this tree was printed for several members (app, bench)" in result.stdout
    assert "no verdict: cargo unified 2 members in this tree" in result.stdout
    assert result.stderr.startswith("featcheck: error: no verdict:")
    code, report = _audit("workspace-unification.p-app.txt")
    assert code == 1 and report["findings"][0]["member"] == "app"


def test_the_readme_check_at_a_workspace_root_says_it_cannot_tell() -> None:
    # `cargo tree -e normal -f '{p} [{f}]' -i burn-flex | featcheck --tree -` at the root.
    text = (TREES / "workspace-unification.root.invert-burn-flex.txt").read_text()
    result = run_in_process("--tree", "-", stdin=text)
    assert result.returncode == 2, result.stdout
    assert "no findings" not in result.stdout
    assert "several members (app, bench)" in result.stdout
    assert "print one tree per member with -p MEMBER" in result.stdout
    report = json.loads(run_in_process("--tree", "-", "--format", "json", stdin=text).stdout)
    assert report["findings"] == [] and report["no_verdict"] == [
        "cargo unified 2 members in this tree; a member built alone may lack features it shows"
    ]


def test_a_tree_with_no_rule_to_run_has_no_verdict() -> None:
    text = (TREES / "pitb-exec-cpu-simd.invert-burn-flex.txt").read_text()
    codes = ",".join(rule.code for rule in builtin_rules())
    result = run_in_process("--tree", "-", "--ignore", codes, stdin=text)
    assert result.returncode == 2
    assert "no verdict: no rule was run (1 member)" in result.stdout


def test_nothing_to_print_is_clean() -> None:
    text = (TREES / "target-specific.invert-burn-flex.apple-darwin.stderr.txt").read_text()
    result = run_in_process("--tree", "-", "--format", "json", stdin=text)
    assert result.returncode == 0
    assert "nothing" in json.loads(result.stdout)["notes"][0]


def test_one_version_of_two() -> None:
    code, report = _audit("two-versions.invert-burn-flex-0.22.1.txt")
    assert code == 1
    assert [(f["crate_version"], f["member"]) for f in report["findings"]] == [("0.22.1", "app")]


def test_a_tree_printed_without_target_says_the_sides_are_merged() -> None:
    # A proc-macro's nom and the binary's nom, the same unit for cargo without --target: the
    # text cannot tell whether the memchr below it is linked.
    merged = """\
app v0.1.0 (/w/app) []
├── macros v0.1.0 (proc-macro) (/w/macros) []
│   └── nom v8.0.0 [alloc]
│       └── memchr v2.8.3 []
├── memchr v2.8.3 [alloc,default,std]
└── nom v8.0.0 [alloc] (*)
"""
    apart = merged.replace("└── nom v8.0.0 [alloc] (*)", NOM_ON_THE_TARGET_SIDE)
    notes = {}
    for name, text in (("merged", merged), ("apart", apart)):
        result = run_in_process("--tree", "-", "--format", "json", stdin=text)
        assert result.returncode == 0, result.stderr
        notes[name] = json.loads(result.stdout)["notes"]
    assert any("printed without --target" in note for note in notes["merged"])
    assert notes["apart"] == []


NOM_ON_THE_TARGET_SIDE = "└── nom v8.0.0 [alloc]\n    └── memchr v2.8.3 [alloc,default,std]"


MEMCHR_WITHOUT_STD = "app v0.1.0 (/w/app) []\n└── memchr v2.7.4 []\n"


def test_rules_for_particular_targets_run_on_the_target_the_user_names() -> None:
    """memchr without `std` is slow on x86_64 only, and the text does not say its target: the
    rule runs where `--target` names one, and is never silently clean where none is named."""
    found = {}
    for target in ("x86_64-unknown-linux-gnu", "aarch64-apple-darwin", None):
        named = ["--target", target] if target else []
        result = run_in_process("--tree", "-", "--format", "json", *named, stdin=MEMCHR_WITHOUT_STD)
        found[target] = (result.returncode, json.loads(result.stdout))
    code, report = found["x86_64-unknown-linux-gnu"]
    assert code == 1 and report["targets"] == ["x86_64-unknown-linux-gnu"]
    assert [(f["code"], f["target"]) for f in report["findings"]] == [
        ("FC012", "x86_64-unknown-linux-gnu")
    ]
    code, report = found["aarch64-apple-darwin"]
    assert code == 0 and report["findings"] == [] and report["notes"] == []
    assert [(s["code"], s["target"]) for s in report["skipped"]] == [
        ("FC012", "aarch64-apple-darwin")
    ]
    code, report = found[None]
    assert code == 0 and report["findings"] == [] and report["targets"] == []
    assert [(s["code"], s["target"], s["findings"]) for s in report["skipped"]] == [
        ("FC012", "(unknown)", 1)
    ]
    assert report["notes"] == [
        "1 finding of rules for particular targets (FC012) not reported: saved tree text does "
        "not say which target cargo printed it for; pass --target TRIPLE (the one given to "
        "cargo tree, else the host's)"
    ]
    two = run_in_process("--tree", "-", "--target", "a", "--target", "b", stdin="")
    assert two.returncode == 2
    assert two.stderr == (
        "featcheck: error: saved tree text is one build: name the one --target it was printed for\n"
    )


def test_a_tree_of_dev_dependencies_only_is_one_line(tmp_path: Path) -> None:
    """Every line under a `[dev-dependencies]` heading: the fuzz test found an IndexError."""
    saved = tmp_path / "saved.txt"
    saved.write_text("[dev-dependencies]\n├── burn-flex v0.22.1 [std]\n")
    done = run_in_process("--tree", str(saved))
    assert done.returncode == 2 and not done.stdout
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "saved.txt:2: no normal dependency lines" in done.stderr
