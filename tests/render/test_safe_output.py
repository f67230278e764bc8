"""Checkout text in every output kind, as an attacker builds it: a workspace whose member
directory name (it reaches every format as the manifest's path) and manifest comment (quoted by
the text report and --diff) carry terminal escapes, bidi controls and the workflow commands of
GitHub Actions and Azure Pipelines; a project rule whose documentation is Markdown with links
and whose references hide a second link. Outside any CI runner, as a report printed by a script
or another CI system is: what reaches the bytes must be inert wherever it is printed.

featcheck runs in the test's process (cli_in_process.run_in_process: the command line with
run_featcheck's environment and streams): what is checked is what it prints.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from actions_support import clear_actions_environment, runner_commands
from cli_in_process import run_in_process
from support import (
    CRATES,
    RegistryViews,
    cargo_environment,
    write_offline_cargo_home,
)

from featcheck.render.safe_text import (
    https_link,
    inert,
    json_document,
    markdown_block,
    safe_line,
)

pytestmark = pytest.mark.usefixtures("remembered_cargo")

TEMPLATE = CRATES / "pitb-exec-cpu"
AZURE = "##vso[task.setvariable variable=PATH]evil"
HOSTILE_DIRECTORY = f"a\u202eb\u2066c\x9b2J {AZURE} ##[error]spoof"
COMMENT = f" # \x85 \u202egnp.exe {AZURE} ##[add-mask]x"


@pytest.fixture(autouse=True)
def _outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_actions_environment(monkeypatch)


def _acted_on(text: str) -> list[str]:
    """What GitHub's runner or Azure's agent would act on in `text` (Azure: `##vso[` anywhere
    in a line, without case)."""
    azure = [line for line in text.splitlines() if "##vso[" in line.lower()]
    return runner_commands(text) + azure


def _hidden_characters(text: str) -> list[str]:
    return [c for c in text if c != "\n" and not c.isprintable()]


def _hostile_workspace(base: Path) -> Path:
    """A workspace whose one member lives in HOSTILE_DIRECTORY, its burn line commented."""
    root = base / "ws"
    member = root / "crates" / HOSTILE_DIRECTORY
    shutil.copytree(TEMPLATE, member, ignore=shutil.ignore_patterns("target", "Cargo.lock"))
    shutil.copy(TEMPLATE / "Cargo.lock", root / "Cargo.lock")
    (root / "Cargo.toml").write_text('[workspace]\nmembers = ["crates/*"]\nresolver = "2"\n')
    manifest = member / "Cargo.toml"
    lines = manifest.read_text().splitlines()
    burn = next(i for i, line in enumerate(lines) if line.startswith("burn = "))
    lines[burn] += COMMENT
    manifest.write_text("\n".join(lines) + "\n")
    return root


@pytest.fixture(scope="module")
def users_environment(
    registry_views: RegistryViews, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    """A CARGO_HOME that cargo uses offline and whose unpacked registry `--no-exec` reads
    (cargo's directory name for crates.io), and a featcheck cache: the user's, made once for
    the module's workspaces."""
    base = tmp_path_factory.mktemp("safe-output-user")
    registry = registry_views.registry(TEMPLATE)
    home = write_offline_cargo_home(base / "cargo-home", registry)
    unpacked = home / "registry" / "src" / "index.crates.io-1949cf8c6b5b557f"
    unpacked.mkdir(parents=True)
    for package in registry.iterdir():
        (unpacked / package.name).symlink_to(package.resolve(), target_is_directory=True)
    return {**cargo_environment(home), "XDG_CACHE_HOME": str(base / "cache")}


@pytest.fixture
def hostile(
    users_environment: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The hostile workspace, in the user's environment."""
    for name, value in users_environment.items():
        monkeypatch.setenv(name, value)
    return _hostile_workspace(tmp_path)


@pytest.mark.parametrize("mode", [[], ["--no-exec"]], ids=["default", "no-exec"])
@pytest.mark.parametrize("output", ["text", "json", "sarif", "github"])
def test_every_format_is_printable_and_inert(hostile: Path, output: str, mode: list[str]) -> None:
    done = run_in_process(str(hostile), "--format", output, "-v", *mode)
    assert done.returncode == 1, done.stderr
    for stream in (done.stdout, done.stderr):
        assert _hidden_characters(stream) == []
        acted = _acted_on(stream)
        if output == "github" and stream is done.stdout:
            # featcheck's own annotation, the only command; no Azure command rides in it.
            [annotation] = acted
            assert annotation.startswith("::error file=crates/"), annotation
            assert "##vso\\x5btask.setvariable" in annotation
        else:
            assert acted == [], acted
    if output == "text":
        assert "crates/a\\u202eb\\u2066c\\x9b2J ##vso\\x5btask.setvariable" in done.stdout
        assert "\\x85 \\u202egnp.exe ##vso\\x5btask" in done.stdout  # the quoted comment
        assert "##\\x5badd-mask]x" in done.stdout


def test_json_escapes_what_it_cannot_show_and_keeps_the_values(hostile: Path) -> None:
    done = run_in_process(str(hostile), "--format", "json")
    assert done.returncode == 1, done.stderr
    assert "\\u202eb\\u2066c\\u009b2J #\\u0023vso[task.setvariable" in done.stdout
    [finding] = json.loads(done.stdout)["findings"]
    assert finding["location"]["file"] == f"crates/{HOSTILE_DIRECTORY}/Cargo.toml"


def test_the_diff_and_an_error_are_inert_outside_actions(hostile: Path) -> None:
    diff = run_in_process(str(hostile), "--diff")
    assert diff.returncode == 1, diff.stderr
    assert _acted_on(diff.stdout) == [] and _hidden_characters(diff.stdout) == []
    assert "\\u202egnp.exe ##vso\\x5btask.setvariable" in diff.stdout
    member = next((hostile / "crates").iterdir())
    (member / "Cargo.toml").write_text(f"[package]\nname = 1 # {AZURE}\n")
    for mode in ([], ["--no-exec"]):
        done = run_in_process(str(member), *mode)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("featcheck: error: "), done.stderr
        assert _acted_on(done.stderr) == [] and _hidden_characters(done.stderr) == []
        assert "##vso\\x5btask.setvariable" in done.stderr


RULE = """\
[[rule]]
code = "ACME001"
name = "regex-without-perf"
severity = "error"
summary = "our services build regex with `perf` [docs](https://evil.example/s)"
crates = [{{ name = "regex", versions = ">=1.9" }}]
feature = "perf"
used-when = {{ direct-dependency = true }}

[rule.doc]
why = \"\"\"Click [here](https://evil.example/login) <img src=x onerror=alert(1)>
::error::spoofed annotation
{azure}
see https://evil.example/autolink and ![p](https://evil.example/p.png)\"\"\"
references = [
  "https://good.example/docs [second](https://evil.example/x)",
  "https://trusted.example@evil.example/",
  "javascript:alert(1)",
  "https://good.example/a)(https://evil.example",
  "http://plain.example/",
  "https://good.example/rules#acme001",
]
"""


def _project_with_rule(tmp_path: Path) -> Path:
    project = tmp_path / "service"
    shutil.copytree(TEMPLATE, project, ignore=shutil.ignore_patterns("target"))
    (project / "featcheck.toml").write_text(RULE.format(azure=AZURE))
    return project


def test_a_project_rule_documentation_is_text_in_sarif(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    offline_cargo_for(TEMPLATE)
    project = _project_with_rule(tmp_path)
    done = run_in_process(str(project), "--format", "sarif")
    assert done.returncode == 1, done.stderr
    assert _acted_on(done.stdout) == []
    rules = json.loads(done.stdout)["runs"][0]["tool"]["driver"]["rules"]
    [rule] = [r for r in rules if r["id"] == "ACME001"]
    # The one plain https URL among the references is the only link.
    assert rule["helpUri"] == "https://good.example/rules#acme001"
    markdown = rule["help"]["markdown"]
    fence, *body, closing = markdown.split("\n")
    assert fence == "```text" and closing == "```"
    assert "Click [here](https://evil.example/login) <img src=x onerror=alert(1)>" in body[-1]
    assert "evil.example" not in rule["helpUri"] and "evil" not in json.dumps(rule.get("helpUri"))
    assert not any(line.startswith("```") for line in body)


def test_without_a_plain_https_reference_a_project_rule_has_no_link(tmp_path: Path) -> None:
    project = _project_with_rule(tmp_path)
    config = project / "featcheck.toml"
    config.write_text(config.read_text().replace('  "https://good.example/rules#acme001",\n', ""))
    from featcheck.policy.load import project_catalogue
    from featcheck.render.sarif import rule_descriptor

    [rule] = [r for r in project_catalogue(project).rules if r.code == "ACME001"]
    descriptor = rule_descriptor(rule)
    assert "helpUri" not in descriptor
    assert descriptor["help"]["markdown"].startswith("```text\n")


def test_featcheck_rule_prints_a_project_rule_inert(tmp_path: Path) -> None:
    project = _project_with_rule(tmp_path)
    for args in (["rule", "ACME001", str(project)], ["rules", str(project)]):
        done = run_in_process(*args)
        assert done.returncode == 0, done.stderr
        assert _acted_on(done.stdout) == [], done.stdout
    shown = run_in_process("rule", "ACME001", str(project)).stdout
    assert "\\x3a:error::spoofed annotation" in shown
    assert "##vso\\x5btask.setvariable" in shown


# --- the one place: each output kind's function ----------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b]8;;https://evil\x07x", "\\x1b]8;;https://evil\\x07x"),
        ("\x9b2J\x85", "\\x9b2J\\x85"),
        ("\u202a\u202b\u202c\u202d\u202e", "\\u202a\\u202b\\u202c\\u202d\\u202e"),
        (
            "\u2066\u2067\u2068\u2069\u200e\u200f\u061c",
            "\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c",
        ),
        ("  ::error::x", "  \\x3a:error::x"),
        ("\t::warning::x", "\\t::warning::x"),
        (
            "a ##vso[task.complete]b ##VSO[x] ##[group]c",
            "a ##vso\\x5btask.complete]b ##VSO\\x5bx] ##\\x5bgroup]c",
        ),
    ],
)
def test_a_terminal_line_shows_controls_and_breaks_commands(text: str, shown: str) -> None:
    assert safe_line(text) == shown
    assert _acted_on(safe_line(text)) == []


def test_a_leading_tab_kept_in_a_diff_line_still_breaks_the_command() -> None:
    assert safe_line("\t::error::x", tabs=True) == "\t\\x3a:error::x"
    assert inert(" \t ::notice::x") == " \t \\x3a:notice::x"


def test_json_escapes_c1_bidi_and_invisible_characters_with_the_same_values() -> None:
    value = {"k\u202e": ["\x85\x7f\u2028\u200b\U000e0001 \udcff", "é ✓", "##vso[x] ##[y]"]}
    document = json_document(value)
    assert json.loads(document) == value
    assert _hidden_characters(document) == [] and _acted_on(document) == []
    assert "\\u0085\\u007f\\u2028\\u200b\\udb40\\udc01 \\udcff" in document
    assert "é ✓" in document  # readable text stays readable


@pytest.mark.parametrize(
    "url",
    [
        "https://good.example/ [second](https://evil.example)",
        "https://good.example/](https://evil.example)",
        "https://good.example/<https://evil.example>",
        'https://good.example/"onclick="x',
        "https://trusted.example@evil.example/",
        "https://good.example/\u202egnp",
        "https://g\u043e\u043ed.example/",
        "https://good.example/\x1b",
        "javascript:alert(1)",
        "http://good.example/",
        "https://",
        "https:///path",
        "https://good.example:port/",
        "https://good.example/`x`",
        "https://good.example/" + "a" * 2100,
    ],
)
def test_a_link_must_be_one_plain_https_url(url: str) -> None:
    assert https_link(url) is None


def test_a_plain_https_url_is_kept() -> None:
    for url in ("https://docs.rs/crate/regex/latest/features", "https://x.example:8443/a?b=1#c"):
        assert https_link(url) == url


def test_a_markdown_block_cannot_be_closed_by_its_text() -> None:
    block = markdown_block("a ```` b\n`````\n[x](https://evil)")
    fence = block.split("\n")[0].removesuffix("text")
    assert re.fullmatch("`{6}", fence) and block.endswith("\n" + fence)


def test_the_old_runner_model_sees_azure(tmp_path: Path) -> None:
    """The helper itself: an Azure command is seen, and so is a GitHub one."""
    assert _acted_on(f"x {AZURE}") and _acted_on("::error::x")
    assert subprocess.run(["true"], check=False).returncode == 0
