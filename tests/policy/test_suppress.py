"""Suppressions: config allow entries, `# featcheck: allow` comments, and FC900 for unused ones."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from featcheck.config import Config, load_config
from featcheck.errors import FeatcheckError
from featcheck.manifest.comments import Comment, scan_comments
from featcheck.manifest.document import read_manifest
from featcheck.report import Finding, Location
from featcheck.rules.docs import rule_markdown
from featcheck.severity import Severity
from featcheck.suppress import InlineAllow, apply_suppressions, declaration_spans, inline_allows
from featcheck.unused_suppression import UNUSED_SUPPRESSION

WORKSPACE = '[workspace]\nmembers = ["app", "lib"]\nresolver = "2"\n'


def _finding(
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


def _app(root: Path, dependencies: str, metadata: str = "") -> Path:
    manifest = root / "app" / "Cargo.toml"
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n'
        + metadata
        + "\n[dependencies]\n"
        + dependencies
    )
    return manifest


def _workspace(root: Path, metadata: str = "", app_deps: str = "", app_meta: str = "") -> Config:
    (root / "Cargo.toml").write_text(WORKSPACE + metadata)
    lib = root / "lib" / "Cargo.toml"
    lib.parent.mkdir(parents=True, exist_ok=True)
    lib.write_text('[package]\nname = "lib"\nversion = "0.1.0"\nedition = "2021"\n')
    app = _app(root, app_deps, app_meta)
    return load_config(root, {"app": app, "lib": lib})


# --- the comment scanner ---------------------------------------------------------------------


def test_scanner_skips_hashes_inside_every_kind_of_string() -> None:
    text = (
        '"# key" = "a # b"  # one\n'
        "lit = 'c # d' # two\n"
        'esc = "quote \\" # still string" # three\n'
        'ml = """\nline # in string\n"""  # four\n'
        "mll = '''\n# in literal\n''' # five\n"
        'odd = """ends with quote""""  # six\n'
        "# seven\n"
    )
    comments = scan_comments(text)
    assert [c.text for c in comments] == [
        "# one",
        "# two",
        "# three",
        "# four",
        "# five",
        "# six",
        "# seven",
    ]
    assert comments[0] == Comment(1, 20, "# one")
    assert comments[3].line == 6 and comments[4].line == 9


def test_scanner_columns_ignore_a_byte_order_mark_and_crlf() -> None:
    comments = scan_comments('\ufeffa = 1 # x\r\nb = "#" # y\r\n')
    assert comments == [Comment(1, 7, "# x"), Comment(2, 9, "# y")]


def test_inline_allows_parse_codes_names_and_reason(tmp_path: Path) -> None:
    manifest = tmp_path / "Cargo.toml"
    manifest.write_text(
        "[dependencies]\n"
        'burn = "0.22"  # featcheck: allow(FC001, flex-without-simd): wasm, no threads\n'
    )
    allows = inline_allows(read_manifest(manifest))
    assert [(a.code, a.reason) for a in allows] == [
        ("FC001", "wasm, no threads"),
        ("FC003", "wasm, no threads"),
    ]
    first, second = (a.origin for a in allows)
    assert (first.line, first.column, first.end_column) == (2, 35, 40)
    assert (second.line, second.column) == (2, 42)
    assert first.source_line.startswith("burn = ")


@pytest.mark.parametrize(
    ("comment", "column", "message"),
    [
        ("# featcheck: allow(FC001)", 15, "needs a reason"),
        ("# featcheck: allow(FC001)   ", 15, "needs a reason"),
        ("# featcheck: allow(FC001, FC0042) why", 41, "unknown rule `FC0042`"),
        ("# featcheck: allow( ) why", 35, "expected a rule code"),
        ("# featcheck: alow(FC001) why", 15, "expected `# featcheck: allow(CODE, ...) reason`"),
        ("# featcheck: allow(FC900) why", 34, "FC900 cannot be allowed"),
    ],
)
def test_malformed_comments_are_errors_at_their_place(
    tmp_path: Path, comment: str, column: int, message: str
) -> None:
    manifest = tmp_path / "Cargo.toml"
    manifest.write_text(f'[dependencies]\nburn = "0.22" {comment}\n')
    with pytest.raises(FeatcheckError) as caught:
        inline_allows(read_manifest(manifest))
    assert (caught.value.path, caught.value.line, caught.value.column) == (manifest, 2, column)
    assert message in caught.value.message


def test_a_malformed_comment_stops_apply_suppressions(tmp_path: Path) -> None:
    manifest = _app(tmp_path, 'burn = "0.22"  # featcheck: allow(FC001)\n')
    with pytest.raises(FeatcheckError) as caught:
        apply_suppressions([], Config(), tmp_path, [manifest])
    assert (caught.value.path, caught.value.line, caught.value.column) == (manifest, 7, 16)


# --- inline comments suppress findings on their declaration -----------------------------------


def test_comment_at_the_end_of_an_inline_declaration(tmp_path: Path) -> None:
    _app(
        tmp_path,
        'burn = { version = "0.22", features = ["flex"] }  # featcheck: allow(FC001) wasm\n',
    )
    finding = _finding(lines=(7, 7))
    other = _finding("FC003", lines=(7, 7))
    result = apply_suppressions([finding, other], Config(), tmp_path)
    assert result.kept == [other]
    [suppressed] = result.suppressed
    assert suppressed.finding == finding
    assert suppressed.reason == "wasm"
    assert isinstance(suppressed.by, InlineAllow)
    assert result.unused == []
    assert result.suppressed_counts() == {"FC001": 1}
    assert result.findings == [other]


def test_comment_on_its_own_line_inside_a_dependency_table(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\n'
        "\n[dependencies.burn]\n"
        'version = "0.22"\n'
        "# featcheck: allow(flex-without-rayon) measured slower on 4 cores\n"
        'features = ["flex"]\n'
        "\n[dependencies.serde]\n"
        'version = "1"\n'
    )
    inside = _finding(lines=(5, 8))
    elsewhere = _finding(crate="gemm", lines=(10, 11))
    result = apply_suppressions([inside, elsewhere], Config(), tmp_path)
    assert [s.finding for s in result.suppressed] == [inside]
    assert result.kept == [elsewhere]


def test_comment_inside_a_multiline_features_array(tmp_path: Path) -> None:
    _app(
        tmp_path,
        "burn = { version = \"0.22\", default-features = false, features = ['std', 'flex'] }\n"
        "\n[dependencies.ndarray]\n"
        'version = "0.16"\n'
        "features = [\n"
        '  "std", # featcheck: allow(FC002) single-threaded by design\n'
        "]\n",
    )
    finding = _finding("FC002", crate="ndarray", lines=(9, 12))
    result = apply_suppressions([finding], Config(), tmp_path)
    assert [s.reason for s in result.suppressed] == ["single-threaded by design"]


def test_directive_after_other_comment_text(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\n'
        "\n[dependencies.burn]\n"
        'version = "=0.22.1"\n'
        "features = [\n"
        '    "flex",   # the CPU backend\n'
        '    # "rayon",  # featcheck: allow(FC001) wasm only\n'
        "]\n"
    )
    result = apply_suppressions([_finding(lines=(5, 10))], Config(), tmp_path)
    assert [s.reason for s in result.suppressed] == ["wasm only"]
    assert result.suppressed[0].by.origin is not None
    assert result.suppressed[0].by.origin.column == 36


def test_spans_hook_adds_the_members_inheriting_declaration(tmp_path: Path) -> None:
    (tmp_path / "Cargo.toml").write_text(
        '[workspace]\nmembers = ["app"]\n\n[workspace.dependencies]\n'
        'burn = { version = "0.22", default-features = false }\n'
    )
    _app(tmp_path, "burn = { workspace = true }  # featcheck: allow(FC001) app is wasm\n")
    finding = _finding(file="Cargo.toml", lines=(5, 5))  # the workspace entry
    assert apply_suppressions([finding], Config(), tmp_path).kept == [finding]

    def with_member_line(f: Finding) -> list[Location]:
        return [*declaration_spans(f), Location("app/Cargo.toml", 7, 1, 7, 28)]

    result = apply_suppressions([finding], Config(), tmp_path, spans=with_member_line)
    assert [s.reason for s in result.suppressed] == ["app is wasm"]
    assert result.unused == []


def test_falls_back_to_the_location_without_a_declaration(tmp_path: Path) -> None:
    _app(tmp_path, 'burn = "0.22"  # featcheck: allow(*) not ours to fix\n')
    finding = _finding("FC005", lines=(7, 7), location_only=True)
    result = apply_suppressions([finding], Config(), tmp_path)
    assert [s.finding for s in result.suppressed] == [finding]


def test_a_hash_inside_a_string_is_not_a_suppression(tmp_path: Path) -> None:
    manifest = _app(
        tmp_path,
        "[dependencies.burn]\n"
        'version = "# featcheck: allow(FC001) x"\n'
        "path = '# featcheck: allow(FC001) y'\n",
    )
    assert inline_allows(read_manifest(manifest)) == []
    finding = _finding(lines=(8, 10))
    result = apply_suppressions([finding], Config(), tmp_path, [manifest])
    assert result.kept == [finding]
    assert result.suppressed == [] and result.unused == []


def test_comment_only_covers_its_own_declaration_and_file(tmp_path: Path) -> None:
    _app(
        tmp_path,
        # gemm is on line 8
        'burn = "0.22"  # featcheck: allow(FC001) wasm\ngemm = "0.17"\n',
    )
    other_line = _finding(crate="gemm", lines=(8, 8))
    other_file = _finding(file="lib/Cargo.toml", lines=(7, 7))
    result = apply_suppressions([other_line, other_file], Config(), tmp_path)
    assert result.kept == [other_line, other_file]
    [unused] = result.unused
    assert unused.location is not None
    assert (unused.location.file, unused.location.line) == ("app/Cargo.toml", 7)


# --- config allow entries --------------------------------------------------------------------


def test_allow_entries_match_by_crate_member_target_and_star(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text(
        '[[allow]]\ncode = "FC001"\ncrate = "burn_flex"\nreason = "by crate"\n'
        '[[allow]]\ncode = "FC002"\nmember = "lib"\nreason = "by member"\n'
        '[[allow]]\ncode = "FC003"\ntarget = "wasm32-unknown-unknown"\nreason = "by target"\n'
        '[[allow]]\ncode = "*"\ncrate = "faer"\nreason = "everything about faer"\n'
    )
    config = load_config(tmp_path, {})
    by_crate = _finding("FC001")
    not_crate = _finding("FC001", crate="gemm")
    by_member = _finding("FC002", member="lib")
    not_member = _finding("FC002", member="app")
    by_target = _finding("FC003", target="wasm32-unknown-unknown")
    not_target = _finding("FC003")
    star = _finding("FC010", crate="faer")
    result = apply_suppressions(
        [by_crate, not_crate, by_member, not_member, by_target, not_target, star],
        config,
        tmp_path,
    )
    assert result.kept == [not_crate, not_member, not_target]
    assert [s.reason for s in result.suppressed] == [
        "by crate",
        "by member",
        "by target",
        "everything about faer",
    ]
    assert result.unused == []


def test_unused_allow_entry_becomes_fc900_at_the_entry(tmp_path: Path) -> None:
    config = _workspace(
        tmp_path,
        "\n[workspace.metadata.featcheck]\n"
        'allow = [\n  { code = "FC004", crate = "burn-cuda", reason = "kernel debugging" },\n]\n',
    )
    result = apply_suppressions([_finding()], config, tmp_path)
    assert len(result.kept) == 1
    [unused] = result.unused
    assert unused.code == "FC900"
    assert unused.rule == "unused-suppression"
    assert unused.severity is Severity.WARNING
    assert unused.member is None and unused.target is None
    assert (unused.crate, unused.crate_version, unused.feature) == ("burn-cuda", "", "")
    assert unused.message == (
        "this suppression of FC004 for crate burn-cuda (reason: kernel debugging) "
        "matches no finding"
    )
    assert unused.location == Location(
        "Cargo.toml",
        7,
        3,
        7,
        71,
        '  { code = "FC004", crate = "burn-cuda", reason = "kernel debugging" },',
    )
    assert result.findings == [*result.kept, unused]


def test_fc900_paths_are_relative_to_the_audited_root(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text('[[allow]]\ncode = "FC001"\nreason = "r"\n')
    config = load_config(tmp_path, {})
    result = apply_suppressions([], config, tmp_path / "app")
    [unused] = result.unused
    assert unused.location is not None
    assert (unused.location.file, unused.location.line, unused.location.column) == (
        "../featcheck.toml",
        1,
        1,
    )


def test_unused_inline_comment_becomes_fc900_at_its_code(tmp_path: Path) -> None:
    manifest = _app(
        tmp_path,
        'burn = "0.22"  # featcheck: allow(FC001, FC003) wasm build\n',
    )
    result = apply_suppressions([_finding("FC001", lines=(7, 7))], Config(), tmp_path, [manifest])
    assert [s.finding.code for s in result.suppressed] == ["FC001"]
    [unused] = result.unused
    assert unused.code == "FC900"
    assert unused.message == "this suppression of FC003 (reason: wasm build) matches no finding"
    assert unused.location == Location(
        "app/Cargo.toml", 7, 42, 7, 47, 'burn = "0.22"  # featcheck: allow(FC001, FC003) wasm build'
    )
    assert "comment" in unused.suggestion


def test_unused_inline_comment_in_a_manifest_without_findings(tmp_path: Path) -> None:
    manifest = _app(tmp_path, 'burn = "0.22"  # featcheck: allow(FC001) wasm\n')
    assert apply_suppressions([], Config(), tmp_path).unused == []  # not asked to read it
    [unused] = apply_suppressions([], Config(), tmp_path, [manifest]).unused
    assert unused.location is not None and unused.location.file == "app/Cargo.toml"


def test_entries_the_audit_could_not_match_are_not_reported(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text(
        'allow = [\n  { code = "FC001", member = "lib", reason = "a" },\n'
        '  { code = "FC001", target = "wasm32-unknown-unknown", reason = "b" },\n'
        '  { code = "FC006", reason = "c" },\n'
        '  { code = "*", crate = "faer", reason = "d" },\n]\n'
    )
    config = load_config(tmp_path, {})
    manifest = _app(tmp_path, 'burn = "0.22"  # featcheck: allow(FC006) opt-in hint\n')
    result = apply_suppressions(
        [],
        config,
        tmp_path,
        [manifest],
        members=["app"],
        targets=["x86_64-unknown-linux-gnu"],
        rules=["FC001", "FC002"],
    )
    assert [f.message.split(" (")[0] for f in result.unused] == [
        "this suppression of all rules for crate faer"
    ]
    everything = apply_suppressions([], config, tmp_path, [manifest])
    assert len(everything.unused) == 5


def test_ignoring_fc900_and_its_severity(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text(
        'ignore = ["FC900"]\nallow = [{ code = "FC001", reason = "r" }]\n'
    )
    assert apply_suppressions([], load_config(tmp_path, {}), tmp_path).unused == []
    (tmp_path / "featcheck.toml").write_text(
        'severity = { unused-suppression = "error" }\nallow = [{ code = "FC001", reason = "r" }]\n'
    )
    [unused] = apply_suppressions([], load_config(tmp_path, {}), tmp_path).unused
    assert unused.severity is Severity.ERROR


# --- per member ------------------------------------------------------------------------------


def test_member_configuration_applies_only_to_that_member(tmp_path: Path) -> None:
    config = _workspace(
        tmp_path,
        '\n[workspace.metadata.featcheck]\nseverity = { FC002 = "info" }\n',
        app_meta="\n[package.metadata.featcheck]\n"
        'severity = { FC001 = "error" }\n'
        'allow = [{ code = "FC003", reason = "app only" }]\n',
    )
    app_fc001 = _finding("FC001", member="app")
    lib_fc001 = _finding("FC001", member="lib")
    app_fc002 = _finding("FC002", member="app")
    app_fc003 = _finding("FC003", member="app")
    lib_fc003 = _finding("FC003", member="lib")
    unknown_member = _finding("FC003", member=None)
    result = apply_suppressions(
        [app_fc001, lib_fc001, app_fc002, app_fc003, lib_fc003, unknown_member], config, tmp_path
    )
    assert result.kept == [
        replace(app_fc001, severity=Severity.ERROR),
        lib_fc001,
        replace(app_fc002, severity=Severity.INFO),
        lib_fc003,
        unknown_member,
    ]
    assert [s.finding for s in result.suppressed] == [app_fc003]
    assert result.unused == []


def test_unused_member_allow_is_reported_only_when_that_member_was_audited(
    tmp_path: Path,
) -> None:
    config = _workspace(
        tmp_path,
        app_meta='\n[package.metadata.featcheck]\nallow = [{ code = "FC003", reason = "x" }]\n',
    )
    assert apply_suppressions([], config, tmp_path, members=["lib"]).unused == []
    [unused] = apply_suppressions([], config, tmp_path, members=["app"]).unused
    assert "FC003 for member app" in unused.message
    assert unused.location is not None and unused.location.file == "app/Cargo.toml"


def test_severity_overrides_apply_to_suppressed_findings_too(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text(
        'severity = { FC001 = "info" }\nallow = [{ code = "FC001", reason = "r" }]\n'
    )
    result = apply_suppressions([_finding()], load_config(tmp_path, {}), tmp_path)
    assert result.suppressed[0].finding.severity is Severity.INFO


# --- the catalogue entry ---------------------------------------------------------------------


def test_fc900_is_documented_like_a_rule() -> None:
    assert (UNUSED_SUPPRESSION.code, UNUSED_SUPPRESSION.name) == ("FC900", "unused-suppression")
    text = rule_markdown(UNUSED_SUPPRESSION)  # type: ignore[arg-type]
    assert text.startswith("# FC900 `unused-suppression`")
    assert "Default severity: **warning**" in text
    assert "## When to ignore it" in text
