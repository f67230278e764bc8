"""benchmarks/rulepack/noise.py judges saved audits: what its report prints for findings with
and without a verdict, and for a verdicts file it cannot read (no cargo: `--from-reports`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO

NOISE = REPO / "benchmarks" / "rulepack" / "noise.py"


def _finding(code: str, member: str, crate: str, group: str) -> dict[str, str]:
    return {
        "code": code,
        "member": member,
        "crate": crate,
        "crate_version": "1.0.0",
        "feature": "std",
        "severity": "info",
        "group": group,
    }


def _report(tmp_path: Path, verdicts: str) -> subprocess.CompletedProcess[str]:
    reports = tmp_path / "reports"
    reports.mkdir()
    findings = [
        _finding("FC012", "gix", "memchr", "g1"),
        _finding("FC012", "gix-tools", "memchr", "g2"),
        _finding("FC026", "gix", "half", "g3"),
    ]
    report = {"members": ["gix", "gix-tools"], "findings": findings}
    audit = {"name": "gitoxide", "seconds": 2.5, "exit_code": 0, "report": report}
    (reports / "gitoxide.json").write_text(json.dumps(audit), encoding="utf-8")
    (tmp_path / "verdicts.toml").write_text(verdicts, encoding="utf-8")
    command = [sys.executable, str(NOISE), "--from-reports", str(reports)]
    command += ["--verdicts", str(tmp_path / "verdicts.toml")]
    return subprocess.run(command, capture_output=True, text=True)


VERDICTS = """
[[verdict]]
rule = "FC012"
project = "gitoxide"
crate = "memchr"
verdict = "deliberate"
reason = "a library keeps bstr minimal"

[[verdict]]
rule = "FC012"
project = "gitoxide"
crate = "memchr"
member = "gix-tools"
verdict = "noise"
reason = "a dev tool"

[[verdict]]
rule = "FC011"
project = "tantivy"
crate = "regex"
verdict = "useful"
reason = "the tokenizer runs on the PikeVM"
"""


def test_each_finding_gets_its_verdict_and_the_rest_show_up(tmp_path: Path) -> None:
    done = _report(tmp_path, VERDICTS)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # FC012: one deliberate, one noise (the member's verdict wins); default-on, none useful.
    assert (
        "| FC012 memchr-without-std | on **no useful finding: opt-in or tighten** | 2 | 0 | 1 | 1 | 0 | 0 | gitoxide |"
        in lines
    )
    assert "| gitoxide | memchr 1.0.0 | `std` | info | gix-tools | noise | a dev tool |" in lines
    # A rule's finding without a verdict is unjudged, a verdict nothing matches is stale.
    assert "| gitoxide | half 1.0.0 | `std` | info | gix | unjudged |  |" in lines
    assert "- FC011 tantivy regex: useful" in lines
    # The project, at the commit its checkout came from; findings as featcheck prints them.
    github = "[GitoxideLabs/gitoxide](https://github.com/GitoxideLabs/gitoxide) `b8914ffda5bc`"
    assert f"| gitoxide | {github} | 2 | 3 | 2.5 | exit 0 |" in lines


@pytest.mark.parametrize(
    "change, says",
    [
        (
            ('"noise"', '"meh"'),
            "verdict 2: verdict must be one of useful, noise, deliberate, wrong",
        ),
        (
            ('reason = "a dev tool"', ""),
            "verdict 2: missing 1 required positional argument: 'reason'",
        ),
        (('member = "gix-tools"', "member = 3"), "verdict 2: every value must be a string"),
        (
            ('crate = "memchr"', 'crate = "memchr'),
            "verdicts.toml: Illegal character '\\n' (at line 5",
        ),
    ],
)
def test_a_bad_verdicts_file_is_refused_in_one_line(
    tmp_path: Path, change: tuple[str, str], says: str
) -> None:
    done = _report(tmp_path, VERDICTS.replace(*change, 1))
    assert (done.returncode, done.stdout) == (2, "")
    [line] = done.stderr.splitlines()
    assert line.startswith(f"noise.py: {tmp_path}") and says in line, line
