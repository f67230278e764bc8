"""The world around a hostile checkout: what the harness watches while featcheck runs on it.

- `markers/`: every planted program (script, shared object, Python module, git hook, build
  script, proc-macro) appends a line to a file here when it runs. A run must leave it empty.
- the attacker's host: an HTTP server on 127.0.0.1 that answers every request with 401, asks
  for Basic credentials, and keeps every Authorization header it is sent. A run must send
  none: the user's git credential helper (in the fake HOME's .gitconfig, below) answers
  `ci-bot`/`SECRET-GIT-TOKEN` for any host, and the environment holds registry tokens.
- `victim/`: files of the user's outside the checkout (another project, a git repository, files
  that links point to), each holding VICTIM_SECRET; `home/`: the user's HOME. Neither may change
  by one byte, and the secret may not appear in what featcheck prints.
"""

from __future__ import annotations

import hashlib
import http.server
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from hostile_support import MARKER_SCRIPT

VICTIM_SECRET = "victim-secret-c4a9"
GIT_SECRET = "SECRET-GIT-TOKEN"
REGISTRY_SECRET = "SECRET-REGISTRY-TOKEN"
CREDENTIAL_HELPER = f'"!f() {{ echo username=ci-bot; echo password={GIT_SECRET}; }}; f"'


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Every request: recorded, then 401 with a Basic challenge (git and cargo then ask the
    user's credential helpers and try again, sending what they got)."""

    def _answer(self) -> None:
        host: FakeHost = self.server.host  # type: ignore[attr-defined]
        host.record(self.command, self.path, self.headers.get("Authorization"))
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="attacker"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_HEAD = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@dataclass
class FakeHost:
    """The attacker's host on loopback."""

    requests: list[tuple[str, str, str | None]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: http.server.ThreadingHTTPServer | None = None

    def start(self) -> None:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
        server.host = self  # type: ignore[attr-defined]
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self._server = server

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def address(self) -> str:
        assert self._server is not None
        return f"127.0.0.1:{self._server.server_address[1]}"

    def record(self, method: str, path: str, authorization: str | None) -> None:
        with self._lock:
            self.requests.append((method, path, authorization))

    def take(self) -> list[tuple[str, str, str | None]]:
        """The requests since the last call."""
        with self._lock:
            taken, self.requests = self.requests, []
        return taken


@dataclass(frozen=True)
class World:
    base: Path
    markers: Path
    victim: Path
    home: Path
    host: FakeHost

    def marker_script(self, path: Path) -> Path:
        """An executable at `path` that leaves the marker `path.name` when run."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(MARKER_SCRIPT.format(log=self.markers / path.name))
        path.chmod(0o755)
        return path

    def written_markers(self) -> dict[str, str]:
        return {p.name: p.read_text(errors="replace") for p in sorted(self.markers.iterdir())}

    def clear_markers(self) -> None:
        for marker in self.markers.iterdir():
            marker.unlink()


def make_world(base: Path, host: FakeHost) -> World:
    """The directories around the family, and the user's HOME with a git credential helper
    that answers for any host (as CI runners and developer machines often have)."""
    world = World(base, base / "markers", base / "victim", base / "home", host)
    for directory in (world.markers, world.victim, world.home):
        directory.mkdir(parents=True)
    (world.home / ".gitconfig").write_text(f"[credential]\n\thelper = {CREDENTIAL_HELPER}\n")
    (world.home / ".ssh").mkdir()
    (world.home / ".ssh" / "id_ed25519").write_text(f"{VICTIM_SECRET} private key\n")
    (world.home / ".bashrc").write_text("# the user's shell\n")
    return world


# --- no byte changed outside -------------------------------------------------------------------

Snapshot = dict[str, tuple[str, int, str]]

_digests: dict[tuple[int, ...], str] = {}
"""Content hashes by the file's identity and change time (device, inode, size, modification
and status-change times): a write, a truncation, a rename over the file or a chmod changes its
status-change time, which no program can set back, so a file whose key is unchanged holds the
bytes that were hashed. Each row snapshots the same few hundred unchanged files twice."""


def snapshot(root: Path, skip: frozenset[Path]) -> Snapshot:
    """Every entry under `root` but the subtrees in `skip`: kind, size and content hash (links by
    their text), never following a link."""
    taken: Snapshot = {}
    _scan(str(root), "", frozenset(str(path) for path in skip), taken)
    return taken


def _scan(directory: str, prefix: str, skip: frozenset[str], taken: Snapshot) -> None:
    with os.scandir(directory) as entries:
        listed = list(entries)
    for entry in listed:
        name = prefix + entry.name
        if entry.is_symlink():
            taken[name] = ("link", 0, os.readlink(entry.path))
        elif entry.is_dir(follow_symlinks=False):
            if entry.path not in skip:
                taken[name] = ("dir", 0, "")
                _scan(entry.path, name + "/", skip, taken)
        elif entry.is_file(follow_symlinks=False):
            status = entry.stat(follow_symlinks=False)
            taken[name] = ("file", status.st_size, _digest(entry.path, status))
        else:
            taken[name] = ("special", 0, "")


def _digest(path: str, status: os.stat_result) -> str:
    key = (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
    known = _digests.get(key)
    if known is None:
        digest = hashlib.sha256()
        with open(path, "rb") as stream:
            for chunk in iter(lambda: stream.read(1 << 20), b""):
                digest.update(chunk)
        known = _digests[key] = digest.hexdigest()
    return known


def changed(before: Snapshot, after: Snapshot) -> list[str]:
    """What was created, removed or changed between two snapshots, sorted."""
    names = sorted(set(before) | set(after))
    return [
        f"{name}: {'created' if name not in before else 'removed' if name not in after else 'changed'}"
        for name in names
        if before.get(name) != after.get(name)
    ]


def walk_files(root: Path) -> Iterator[Path]:
    for directory, _, files in os.walk(root):
        for name in files:
            yield Path(directory) / name
