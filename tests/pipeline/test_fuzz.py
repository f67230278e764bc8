"""Fuzzing: whatever the input, featcheck gives a verdict or one clear error, never a traceback.

Inputs are the real fixtures (fixture and template manifests, lockfiles, saved `cargo tree`
text, featcheck configuration) mutated at the byte level: truncation, invalid UTF-8, duplicated
lines (duplicate keys and tables), values of the wrong type, TOML punctuation, random bytes.
The in-process parts (manifest reading and span indexing, declarations, configuration, tree
text, the checkout's cargo configuration and toolchain file) run many examples; the CLI parts
run featcheck's command line (in this process, cli_in_process.run_in_process) with real cargo
and run few; the enormous manifests, a hanging cargo and the German locale run it as a process
of its own, as a user does (its own stack, its own locale). Fixed cases cover what random
mutation rarely reaches: enormous arrays, deep nesting, a symlink loop and an unreadable
directory among workspace members, a cargo that hangs, and cargo in a German locale.

FEATCHECK_FUZZ_EXAMPLES=N runs N examples of each in-process part (and N/25 of each CLI part,
at least the default) for a long local session; the defaults keep the file near a minute.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from support import CRATES, TREES, WORKSPACES, run_featcheck, trust_of

from featcheck.cargo.checkout_config import read_checkout_config
from featcheck.cargo.runner import CargoRunner
from featcheck.cargo.toolchain import find_toolchain_request
from featcheck.errors import FeatcheckError
from featcheck.manifest.declarations import all_sites, workspace_site
from featcheck.manifest.document import read_manifest
from featcheck.manifest.spans import index_spans
from featcheck.manifest.toml_lexer import scan_comments
from featcheck.policy import load
from featcheck.policy.settings import inline_allows
from featcheck.semantics.cfg import TargetCfg
from featcheck.tree_mode import audit_tree_text
from featcheck.workspace.cargo_metadata import parse_metadata

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_REQUESTED = int(os.environ.get("FEATCHECK_FUZZ_EXAMPLES", "0") or 0)


def examples(default: int, *, subprocess_part: bool = False) -> int:
    if _REQUESTED <= 0:
        return default
    return max(default, _REQUESTED // 25) if subprocess_part else _REQUESTED


def fuzz_settings(default: int, *, subprocess_part: bool = False) -> settings:
    return settings(
        max_examples=examples(default, subprocess_part=subprocess_part),
        deadline=None,
        database=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
    )


# --- the corpus -------------------------------------------------------------------------------

MANIFESTS = sorted(
    {
        *WORKSPACES.glob("*/Cargo.toml"),
        *WORKSPACES.glob("*/*/Cargo.toml"),
        *CRATES.glob("*/Cargo.toml"),
    }
)
LOCKFILES = sorted(p for p in WORKSPACES.glob("*/Cargo.lock") if p.stat().st_size < 64_000)
TREE_FILES = sorted(TREES.glob("*.txt"))
CONFIGS = [
    b'select = ["FC006"]\nignore = ["flex-without-rayon"]\nfail-on = "warning"\n'
    b'targets = ["aarch64-apple-darwin"]\n[severity]\nFC001 = "info"\n'
    b'[[allow]]\ncode = "FC001"\ncrate = "burn-flex"\nreason = "benchmarked"\n',
    b"[workspace]\n[workspace.metadata.featcheck]\n"
    b'select = ["FC006"]\nallow = [{ code = "*", member = "app", reason = "x" }]\n',
]
CARGO_CONFIGS = [
    b'[build]\nrustc = "x"\nrustflags = ["--cfg", "a", "-Ctarget-cpu=native"]\n'
    b'[source.crates-io]\nreplace-with = "v"\n[source.v]\ndirectory = "vendor"\n'
    b'[patch.crates-io]\nrayon = { path = "p" }\n[env]\nA = { value = "b", force = true }\n'
    b'include = [{ path = "other.toml", optional = true }]\n[target."cfg(unix)"]\n'
    b'rustflags = "--cfg b"\n[net]\noffline = true\nretry = 3\n',
]
TOOLCHAIN_FILES = [
    b'[toolchain]\nchannel = "1.95"\ncomponents = ["rustfmt"]\ntargets = ["wasm32"]\n',
    b'[toolchain]\npath = "/opt/rust"\n',
    b"nightly-2026-01-01\n",
]

HOST_CFG = TargetCfg.parse(
    "x86_64-unknown-linux-gnu",
    'debug_assertions\npanic="unwind"\ntarget_arch="x86_64"\ntarget_endian="little"\n'
    'target_env="gnu"\ntarget_family="unix"\ntarget_os="linux"\ntarget_pointer_width="64"\n'
    'target_vendor="unknown"\nunix\n',
)

# --- byte-level mutation ----------------------------------------------------------------------

INVALID_UTF8 = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x80"]
TOKENS = [
    b"[", b"]", b"{", b"}", b'"', b"'", b"'''", b'"""', b"=", b",", b".", b"#", b"\\", b"\\u",
    b"\r", b"\t", b"\x00", b"\n[package]\n", b"\n[[bin]]\n", b"\n[dependencies]\n",
    b"\n[workspace]\n", b"\n[features]\n", b"\xef\xbb\xbf", b"1979-05-27T07:32:00Z",
    b"inf", b"nan", b"-0", b"0x_1",
]  # fmt: skip
WRONG_TYPES = [
    (rb"features = \[[^\]\n]*\]", b'features = "rayon"'),
    (rb"default-features = (true|false)", b'default-features = "no"'),
    (rb'version = "[^"\n]*"', b"version = 3"),
    (rb'version = "[^"\n]*"', b"version = { workspace = 1 }"),
    (rb'edition = "[^"\n]*"', b"edition = 2024"),
    (rb'name = "[^"\n]*"', b'name = ""'),
    (rb'name = "[^"\n]*"', b"name = []"),
    (rb"= \{", b"= ["),
    (rb"\}", b"]"),
    (rb"members = \[", b'members = "'),
    (rb"workspace = true", b'workspace = "yes"'),
    (rb"optional = true", b"optional = 1.5"),
    (rb"\[dependencies\]", b"dependencies = 3\n[dependencies]"),
    (rb"\[package\]", b"[[package]]"),
    (rb'"[a-z-]+" = \[', b'"" = ['),
    (rb"(?m)^burn", b'"b\\u0000urn"'),
]
OPS = (
    "truncate",
    "invalid_utf8",
    "duplicate_line",
    "random_bytes",
    "delete",
    "swap_lines",
    "wrong_type",
    "token",
)


@st.composite
def mutated(draw: st.DrawFn, sources: list[bytes], ops: tuple[str, ...] = OPS) -> bytes:
    """One fixture with one to four mutations applied."""
    data = draw(st.sampled_from(sources))
    for _ in range(draw(st.integers(1, 4))):
        data = _mutate(draw, data, draw(st.sampled_from(ops)))
    return data


def _mutate(draw: st.DrawFn, data: bytes, op: str) -> bytes:
    position = draw(st.integers(0, len(data)))
    if op == "truncate":
        return data[:position]
    if op == "invalid_utf8":
        return data[:position] + draw(st.sampled_from(INVALID_UTF8)) + data[position:]
    if op == "token":
        return data[:position] + draw(st.sampled_from(TOKENS)) + data[position:]
    if op == "random_bytes":
        end = min(len(data), position + draw(st.integers(0, 8)))
        return data[:position] + draw(st.binary(max_size=8)) + data[end:]
    if op == "delete":
        return data[:position] + data[min(len(data), position + draw(st.integers(1, 64))) :]
    lines = data.splitlines(keepends=True)
    if not lines:
        return data
    index = draw(st.integers(0, len(lines) - 1))
    if op == "duplicate_line":
        where = draw(st.integers(0, len(lines)))
        lines.insert(where, lines[index] if lines[index].endswith(b"\n") else lines[index] + b"\n")
        return b"".join(lines)
    if op == "swap_lines":
        other = draw(st.integers(0, len(lines) - 1))
        lines[index], lines[other] = lines[other], lines[index]
        return b"".join(lines)
    pattern, replacement = draw(st.sampled_from(WRONG_TYPES))
    matches = list(re.finditer(pattern, data))
    if not matches:
        return data
    match = matches[draw(st.integers(0, len(matches) - 1))]
    return data[: match.start()] + replacement + data[match.end() :]


def _read(paths: list[Path]) -> list[bytes]:
    return [p.read_bytes() for p in paths]


INLINE_ALLOWS = (
    (CRATES / "pitb-exec-cpu" / "Cargo.toml")
    .read_text()
    .replace(
        "[dependencies]\n", "[dependencies]\n# featcheck: allow(FC001, flex-without-simd) why\n"
    )
    .replace('"optim"] }', '"optim"] }  # see below  # FeatCheck: Allow(*) - measured')
    .encode()
)
MANIFEST_BYTES = [*_read(MANIFESTS), INLINE_ALLOWS]
LOCK_BYTES = _read(LOCKFILES)
TREE_BYTES = _read(TREE_FILES)


def random_or_mutated(sources: list[bytes]) -> st.SearchStrategy[bytes]:
    return st.one_of(mutated(sources), mutated(sources), st.binary(max_size=512))


# --- in-process parts -------------------------------------------------------------------------


def check_manifest(path: Path) -> None:
    """Everything featcheck does with a manifest without cargo; only FeatcheckError may escape."""
    try:
        document = read_manifest(path)
    except FeatcheckError as error:
        assert str(error).startswith(str(path))
        return
    # Valid TOML: the span index must cope (it promises ValueError at worst, and never on
    # what tomlkit accepts).
    spans = document.spans
    assert isinstance(spans, dict)
    for site in all_sites(document, document):
        assert isinstance(site.key, str) and site.inherits in (True, False)
        assert site.version is None or isinstance(site.version, str)
        assert site.applies(None)
        assert site.applies(HOST_CFG) in (True, False)
        site.default_features_entry()
        site.disables_defaults()
        document.spans.get(site.path)
    workspace_site(document, "burn")
    scan_comments(document.text)
    with contextlib.suppress(FeatcheckError):
        inline_allows(document)
    for number in (0, 1, 10**6):
        document.line_text(number)


@fuzz_settings(600)
@given(data=random_or_mutated(MANIFEST_BYTES + LOCK_BYTES))
def test_manifest_reading_survives_mutation(tmp_path: Path, data: bytes) -> None:
    manifest = tmp_path / "Cargo.toml"
    manifest.write_bytes(data)
    check_manifest(manifest)


@fuzz_settings(1000)
@given(text=st.one_of(mutated(MANIFEST_BYTES), st.binary(max_size=256)))
def test_span_index_fails_only_with_value_error(text: bytes) -> None:
    decoded = text.decode("utf-8", errors="replace")
    with contextlib.suppress(ValueError):
        index_spans(decoded)


@fuzz_settings(800)
@given(data=random_or_mutated(TREE_BYTES))
def test_tree_text_survives_mutation(data: bytes) -> None:
    try:
        audit_tree_text(data.decode("utf-8", errors="replace"), "saved.txt")
    except FeatcheckError as error:
        assert "\n" not in str(error).strip() or str(error).startswith("saved.txt")


@fuzz_settings(500)
@given(
    data=random_or_mutated(CONFIGS),
    manifest=st.one_of(st.just(None), mutated([MANIFEST_BYTES[0] + b"\n" + CONFIGS[1]])),
)
def test_configuration_loader_survives_mutation(
    tmp_path: Path, data: bytes, manifest: bytes | None
) -> None:
    (tmp_path / "featcheck.toml").write_bytes(data)
    member = tmp_path / "Cargo.toml"
    if manifest is None:
        member.unlink(missing_ok=True)
    else:
        member.write_bytes(manifest)
    with contextlib.suppress(FeatcheckError):
        load.load_config(tmp_path, {"app": member})


@fuzz_settings(400)
@given(
    data=random_or_mutated(CARGO_CONFIGS),
    toolchain=random_or_mutated(TOOLCHAIN_FILES),
    legacy=st.booleans(),
)
def test_checkout_configuration_and_toolchain_files_survive_mutation(
    tmp_path: Path, data: bytes, toolchain: bytes, legacy: bool
) -> None:
    (tmp_path / ".cargo").mkdir(exist_ok=True)
    (tmp_path / ".cargo" / "config.toml").write_bytes(data)
    for name in ("rust-toolchain", "rust-toolchain.toml"):
        (tmp_path / name).unlink(missing_ok=True)
    (tmp_path / ("rust-toolchain" if legacy else "rust-toolchain.toml")).write_bytes(toolchain)
    try:
        arguments = read_checkout_config(tmp_path, {}, None).arguments
    except FeatcheckError:
        pass
    else:
        # One argument each, `--config=KEY=VALUE`: nothing left to be read as an option.
        assert all(a.startswith("--config=") and "\n" not in a for a in arguments)
    try:
        request = find_toolchain_request(tmp_path, {})
    except FeatcheckError:
        pass
    else:
        # A name that reaches RUSTUP_TOOLCHAIN or `rustup --toolchain` is never a path.
        assert request.name is None or re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", request.name)


# --- enormous and deep inputs (in process) ----------------------------------------------------

TEMPLATE = (CRATES / "pitb-exec-cpu" / "Cargo.toml").read_text()
HUGE_FEATURES = ", ".join(f'"f{i}"' for i in range(100_000))
HUGE_TABLE = "".join(f"f{i} = []\n" for i in range(20_000))
DEEP_ARRAY = "x = " + "[" * 10_000 + "]" * 10_000 + "\n"
DEEP_TABLE = "x = " + "{ a = " * 10_000 + "1" + " }" * 10_000 + "\n"
EXTREMES = {
    "100k-features": TEMPLATE.replace('"optim"]', f'"optim", {HUGE_FEATURES}]'),
    "20k-feature-table": TEMPLATE + "\n[features]\n" + HUGE_TABLE,
    "10k-nested-arrays": TEMPLATE + "\n[package.metadata]\n" + DEEP_ARRAY,
    "10k-nested-inline-tables": TEMPLATE + "\n[package.metadata]\n" + DEEP_TABLE,
    "10k-dotted-key": TEMPLATE + "\n[package.metadata]\n" + ".".join(["k"] * 10_000) + " = 1\n",
    "2k-table-headers": TEMPLATE + "".join(f"\n[package.metadata.t{i}]\n" for i in range(2_000)),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXTREMES))
def test_enormous_and_deep_manifests_in_process(tmp_path: Path, name: str) -> None:
    manifest = tmp_path / "Cargo.toml"
    manifest.write_text(EXTREMES[name])
    started = time.monotonic()
    check_manifest(manifest)
    assert time.monotonic() - started < 60


@pytest.mark.parametrize("text", [DEEP_ARRAY, DEEP_TABLE, "[toolchain]\n" + DEEP_TABLE])
def test_deep_checkout_files_are_errors(tmp_path: Path, text: str) -> None:
    (tmp_path / ".cargo").mkdir()
    (tmp_path / ".cargo" / "config.toml").write_text(text)
    (tmp_path / "rust-toolchain.toml").write_text(text)
    with pytest.raises(FeatcheckError):
        read_checkout_config(tmp_path, {}, None)
    with pytest.raises(FeatcheckError):
        find_toolchain_request(tmp_path, {})


# --- the CLI, with real cargo -----------------------------------------------------------------


EXIT_CODES: Counter[int] = Counter()
"""Exit codes of every CLI run in this module (printed at the end, with -s)."""


@pytest.fixture(scope="module", autouse=True)
def _report_exit_codes() -> Iterator[None]:
    yield
    if EXIT_CODES:
        print(f"\nfuzz CLI runs by exit code: {dict(sorted(EXIT_CODES.items()))}")


def assert_clean_exit(done: subprocess.CompletedProcess[str]) -> None:
    """Exit 0, 1 or 2; never a traceback; exit 2 is one line (two with cargo's reason)."""
    EXIT_CODES[done.returncode] += 1
    assert done.returncode in (0, 1, 2), done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    if done.returncode == 2:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert 1 <= len(lines) <= 2, done.stderr
        assert lines[0].startswith("featcheck: error: "), done.stderr


def _template_project(base: Path) -> Path:
    project = base / "project"
    if project.exists():
        shutil.rmtree(project)
    (project / "src").mkdir(parents=True)
    shutil.copy(CRATES / "pitb-exec-cpu" / "Cargo.toml", project / "Cargo.toml")
    shutil.copy(CRATES / "pitb-exec-cpu" / "Cargo.lock", project / "Cargo.lock")
    (project / "src" / "main.rs").write_text("fn main() {}\n")
    return project


CLI_MANIFESTS = [(CRATES / "pitb-exec-cpu" / "Cargo.toml").read_bytes()]


@fuzz_settings(10, subprocess_part=True)
@given(data=mutated(CLI_MANIFESTS))
def test_cli_on_mutated_manifests(tmp_path: Path, offline_cargo: Path, data: bytes) -> None:
    project = _template_project(tmp_path)
    (project / "Cargo.toml").write_bytes(data)
    lock = (project / "Cargo.lock").read_bytes()
    done = run_in_process(str(project), "--timeout", "120")
    assert_clean_exit(done)
    assert (project / "Cargo.lock").read_bytes() == lock


@fuzz_settings(5, subprocess_part=True)
@given(data=random_or_mutated([(CRATES / "pitb-exec-cpu" / "Cargo.lock").read_bytes()]))
def test_cli_on_mutated_lockfiles(tmp_path: Path, offline_cargo: Path, data: bytes) -> None:
    project = _template_project(tmp_path)
    (project / "Cargo.lock").write_bytes(data)
    done = run_in_process(str(project), "--timeout", "120")
    assert_clean_exit(done)
    # cargo may rewrite a lockfile it can read; featcheck puts the user's bytes back.
    assert (project / "Cargo.lock").read_bytes() == data


@fuzz_settings(4, subprocess_part=True)
@given(data=random_or_mutated(CONFIGS[:1]))
def test_cli_on_mutated_featcheck_toml(tmp_path: Path, offline_cargo: Path, data: bytes) -> None:
    project = _template_project(tmp_path)
    (project / "featcheck.toml").write_bytes(data)
    assert_clean_exit(run_in_process(str(project), "--timeout", "120"))


@pytest.mark.parametrize("name", ["100k-features", "10k-nested-arrays", "10k-nested-inline-tables"])
def test_cli_on_enormous_and_deep_manifests(tmp_path: Path, offline_cargo: Path, name: str) -> None:
    project = _template_project(tmp_path)
    (project / "Cargo.toml").write_text(EXTREMES[name])
    done = run_featcheck(str(project), "--timeout", "120")
    assert_clean_exit(done)
    assert done.returncode == 2


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('features = ["std", "flex", "autodiff", "optim"]', 'features = "rayon"'),
        ("default-features = false", 'default-features = "no"'),
        ('version = "=0.22.1"', "version = 3"),
    ],
)
def test_cli_on_values_of_the_wrong_type(
    tmp_path: Path, offline_cargo: Path, old: str, new: str
) -> None:
    project = _template_project(tmp_path)
    (project / "Cargo.toml").write_text(TEMPLATE.replace(old, new))
    done = run_in_process(str(project))
    assert_clean_exit(done)
    assert done.returncode == 2
    assert "Cargo.toml" in done.stderr


def test_cli_on_members_glob_with_symlink_loop_and_unreadable_member(
    tmp_path: Path, offline_cargo: Path
) -> None:
    root = tmp_path / "ws"
    shutil.copytree(WORKSPACES / "workspace-unification", root)
    crates = root / "crates"
    real = crates / "real"
    (real / "src").mkdir(parents=True)
    (real / "Cargo.toml").write_text('[package]\nname = "real"\nversion = "0.1.0"\n')
    (real / "src" / "lib.rs").write_text("")
    (real / "loop").symlink_to("..")  # inside a member: crates/real/loop/real/loop/...
    (real / "self").symlink_to(".")
    (crates / "loop").symlink_to(crates)  # matched by the glob: crates/loop/loop/loop/...
    (crates / "dangling").symlink_to(root / "nowhere")
    locked = crates / "locked"
    locked.mkdir()
    (locked / "Cargo.toml").write_text('[package]\nname = "locked"\nversion = "0.1.0"\n')
    locked.chmod(0)
    manifest = root / "Cargo.toml"
    text = manifest.read_text()
    members = 'members = ["app", "bench", "crates/*"]'
    try:
        # Every glob hit that is not a package is cargo's error: one clear line.
        manifest.write_text(re.sub(r"members = \[[^\]]*\]", members, text))
        hit = run_in_process(str(root), "--timeout", "120")
        # Excluded, the loops and the unreadable directory leave the audit intact.
        excluded = '\nexclude = ["crates/loop", "crates/locked", "crates/dangling"]'
        manifest.write_text(re.sub(r"members = \[[^\]]*\]", members + excluded, text))
        audited = run_in_process(str(root), "--timeout", "120", "--format", "json")
        inside = run_in_process(str(real / "loop" / "loop" / "real"), "--timeout", "120")
    finally:
        locked.chmod(0o755)
    for done in (hit, audited, inside):
        assert_clean_exit(done)
    # The member cargo cannot load, named at the root manifest that lists it.
    assert hit.returncode == 2 and "Cargo.toml: failed to load manifest for workspace member" in (
        hit.stderr
    )
    assert audited.returncode == 1, audited.stderr
    assert '"code": "FC001"' in audited.stdout
    # crates/real reached through both loops: cargo refuses the looping path, featcheck says so.
    assert inside.returncode == 2 and "cargo metadata failed" in inside.stderr


FAKE_CARGO = """\
#!/bin/sh
sleep 300 &
echo $! > "{pids}"
wait
"""


@pytest.fixture
def hanging_toolchain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `cargo` and `rustc` first on PATH (not rustup proxies, so featcheck runs them) that
    start a grandchild and wait for it forever."""
    bin_dir = tmp_path / "hanging-bin"
    bin_dir.mkdir()
    pids = tmp_path / "grandchild.pid"
    for name in ("cargo", "rustc"):
        (bin_dir / name).write_text(FAKE_CARGO.format(pids=pids))
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]))
    return pids


def _assert_dead(pids: Path) -> None:
    pid = int(pids.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        # A zombie is dead too (its parent, the killed shell, is gone; init reaps it).
        try:
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return
        except OSError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    raise AssertionError(f"the hanging cargo's child {pid} outlived featcheck")


def test_timeout_ends_a_hanging_cargo_and_its_children(
    tmp_path: Path, hanging_toolchain: Path
) -> None:
    project = _template_project(tmp_path)
    started = time.monotonic()
    done = run_featcheck(str(project), "--timeout", "1")
    elapsed = time.monotonic() - started
    assert_clean_exit(done)
    assert done.returncode == 2
    assert "did not finish within 1 s" in done.stderr
    assert elapsed < 30
    _assert_dead(hanging_toolchain)


def test_timeout_in_the_runner_with_a_fake_executable(
    tmp_path: Path, hanging_toolchain: Path
) -> None:
    project = _template_project(tmp_path)
    for trust in (False, True):
        runner = CargoRunner(project, trust=trust_of(project, trust_checkout=trust), timeout=1)
        started = time.monotonic()
        with pytest.raises(FeatcheckError, match=r"`cargo metadata` did not"):
            runner.start_metadata(project / "Cargo.toml").result(parse_metadata)
        assert time.monotonic() - started < 15
        _assert_dead(hanging_toolchain)


@pytest.mark.parametrize("variable", ["LANG", "LC_ALL"])
def test_cargo_in_a_german_locale(
    tmp_path: Path, offline_cargo: Path, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setenv(variable, "de_DE.UTF-8")
    monkeypatch.setenv("LANGUAGE", "de")
    done = run_featcheck(str(CRATES / "pitb-exec-cpu"), "--format", "json")
    assert done.returncode == 1, done.stderr
    assert '"code": "FC001"' in done.stdout
    # cargo's messages stay English, so failures are still classified.
    project = _template_project(tmp_path)
    (project / "Cargo.toml").write_text(TEMPLATE.replace('"=0.22.1"', '"=9.9.9"'))
    failed = run_featcheck(str(project))
    assert_clean_exit(failed)
    assert failed.returncode == 2
    assert "cargo metadata failed" in failed.stderr and "burn" in failed.stderr
