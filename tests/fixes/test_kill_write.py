"""Writes that cannot corrupt: featcheck.fileio.write_atomic.

A write keeps the file's mode, refuses a read-only file and one that changed since featcheck
read it, and goes through a symlink. The kill test runs a writer that replaces a multi-megabyte
manifest again and again while the test SIGKILLs it at random moments: every time, the file
must hold exactly the old or exactly the new manifest (both valid TOML), and nothing may be
left but, possibly, one hidden `.Cargo.toml.XXXXXXXX` temporary file per kill (never read by
cargo or featcheck, safe to delete).
"""

from __future__ import annotations

import functools
import os
import random
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from featcheck.errors import FeatcheckError
from featcheck.fileio import write_atomic

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MANIFEST = b'[package]\nname = "app"\nversion = "0.1.0"\nedition = "2024"\n'


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("mode", [0o600, 0o755, 0o640, 0o644])
def test_mode_is_kept(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "Cargo.toml"
    path.write_bytes(MANIFEST)
    path.chmod(mode)
    write_atomic(path, MANIFEST + b"\n[features]\n", expected=MANIFEST)
    assert path.read_bytes() == MANIFEST + b"\n[features]\n"
    assert _mode(path) == mode


def test_a_new_file_gets_the_usual_mode(tmp_path: Path) -> None:
    path = tmp_path / "Cargo.lock"
    write_atomic(path, b"version = 4\n")
    assert (path.read_bytes(), _mode(path)) == (b"version = 4\n", 0o644)


def test_read_only_file_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "Cargo.toml"
    path.write_bytes(MANIFEST)
    path.chmod(0o444)
    with pytest.raises(FeatcheckError, match="read-only"):
        write_atomic(path, b"changed", expected=MANIFEST)
    assert path.read_bytes() == MANIFEST
    assert _mode(path) == 0o444
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Cargo.toml"]


def test_restoring_puts_back_bytes_even_over_a_read_only_file(tmp_path: Path) -> None:
    """The lockfile guard undoes what cargo (running as root) wrote over a read-only file."""
    path = tmp_path / "Cargo.lock"
    path.write_bytes(b"written by cargo")
    path.chmod(0o444)
    write_atomic(path, b"the user's lockfile", restoring=True)
    assert (path.read_bytes(), _mode(path)) == (b"the user's lockfile", 0o444)


def test_file_changed_since_read_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "Cargo.toml"
    path.write_bytes(MANIFEST + b"# edited by the user meanwhile\n")
    with pytest.raises(FeatcheckError, match="changed since featcheck read it"):
        write_atomic(path, b"featcheck's edit", expected=MANIFEST)
    assert path.read_bytes() == MANIFEST + b"# edited by the user meanwhile\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Cargo.toml"]


def test_file_deleted_since_read_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FeatcheckError, match="cannot read"):
        write_atomic(tmp_path / "Cargo.toml", b"x", expected=MANIFEST)
    assert list(tmp_path.iterdir()) == []


def test_a_symlink_is_written_through(tmp_path: Path) -> None:
    real = tmp_path / "shared" / "Cargo.toml"
    real.parent.mkdir()
    real.write_bytes(MANIFEST)
    real.chmod(0o600)
    link = tmp_path / "Cargo.toml"
    link.symlink_to(Path("shared") / "Cargo.toml")
    write_atomic(link, b"new", expected=MANIFEST)
    assert link.is_symlink()
    assert (real.read_bytes(), _mode(real)) == (b"new", 0o600)


def test_unwritable_directory_is_a_clear_error(tmp_path: Path) -> None:
    directory = tmp_path / "locked"
    directory.mkdir()
    path = directory / "Cargo.toml"
    path.write_bytes(MANIFEST)
    directory.chmod(0o555)
    try:
        if os.access(directory, os.W_OK):
            pytest.skip("running as a user who can write anywhere (root)")
        with pytest.raises(FeatcheckError, match="cannot write here"):
            write_atomic(path, b"x", expected=MANIFEST)
    finally:
        directory.chmod(0o755)
    assert path.read_bytes() == MANIFEST


# --- the kill test ----------------------------------------------------------------------------


@functools.cache
def _big_manifest(tag: str, size: int = 4 << 20) -> bytes:
    """A valid manifest of about `size` bytes whose every part names `tag` (made and checked
    once per test process: tomlkit took 2.8 s to parse each, the standard parser 0.6 s)."""
    lines = [MANIFEST.decode(), "\n[package.metadata.padding]\n"]
    line = f'entry-{{}} = "{tag} {"x" * 80}"\n'
    count = size // len(line.format(0))
    lines += [line.format(i) for i in range(count)]
    content = "".join(lines)
    assert tomllib.loads(content)["package"]["name"] == "app"
    return content.encode()


WRITER = textwrap.dedent(
    """\
    import sys
    from pathlib import Path
    from featcheck import fileio
    from featcheck.fileio import write_atomic

    path, old, new = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    if sys.argv[4] == "named":  # as on file systems without O_TMPFILE
        fileio._replace_from_unnamed_file = lambda *_: False
    contents = [old.read_bytes(), new.read_bytes()]
    print("ready", flush=True)
    turn = 1
    while True:
        current = path.read_bytes()
        write_atomic(path, contents[turn], expected=current)
        turn = 1 - turn
    """
)


@pytest.mark.parametrize("temporary", ["unnamed", "named"])
def test_sigkill_at_random_moments_leaves_old_or_new(tmp_path: Path, temporary: str) -> None:
    iterations = int(os.environ.get("FEATCHECK_KILL_ITERATIONS", "25"))
    old, new = _big_manifest("old"), _big_manifest("new", (4 << 20) + 12345)
    work = tmp_path / "project"
    work.mkdir()
    path = work / "Cargo.toml"
    path.write_bytes(old)
    path.chmod(0o640)
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "old").write_bytes(old)
    (sources / "new").write_bytes(new)
    (sources / "writer.py").write_text(WRITER)
    rng = random.Random(int(os.environ.get("FEATCHECK_KILL_SEED", "0")) or None)
    seen = {"old": 0, "new": 0}
    leftovers = 0
    for _ in range(iterations):
        arguments = [str(path), str(sources / "old"), str(sources / "new"), temporary]
        writer = subprocess.Popen(
            [sys.executable, str(sources / "writer.py"), *arguments], stdout=subprocess.PIPE
        )
        assert writer.stdout is not None
        assert writer.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0, 0.25))
        writer.send_signal(signal.SIGKILL)  # no handler, no cleanup
        writer.wait()
        writer.stdout.close()
        data = path.read_bytes()
        assert data in (old, new), f"torn write: {len(data)} bytes"
        seen["old" if data == old else "new"] += 1
        assert _mode(path) == 0o640
        others = sorted(p.name for p in work.iterdir() if p.name != "Cargo.toml")
        assert len(others) <= 1, others
        for name in others:
            # A temporary file from the killed write: hidden, never named Cargo.toml.
            assert name.startswith(".Cargo.toml.") and name != "Cargo.toml"
            (work / name).unlink()
            leftovers += 1
    print(f"kill test ({temporary}): {iterations} kills, {seen}, {leftovers} temporary files left")
    # The kills landed at different moments: both contents were seen after a kill.
    assert seen["old"] > 0 and seen["new"] > 0, seen
