"""Every git process featcheck starts (`--new-since`): `start_git` is the only place one starts;
and the commit a revision names, as git resolves it (`resolve_revision`).

The choice: the user's own git, in an environment featcheck makes, over a Python reader of git's
files (dulwich). git already names the revision (`HEAD~1`, `origin/main`, `@{upstream}`: only
git's own `rev-parse` reads every form), reads every repository its user can (packs, loose
objects, alternates, worktrees, SHA-256, reftable) and, as a process, can be killed at
--timeout however a repository makes it wait; a reader library would be one more dependency
to install and to keep in step with git's formats, and would block an audit thread beyond
reach. What git must not do is obey the repository, so the environment is made, not inherited:

- Every `GIT_*` variable of the caller is dropped (a `GIT_DIR` set by a hook would point git at
  another repository; `GIT_SSH_COMMAND`, `GIT_CONFIG_*`, `GIT_ALTERNATE_OBJECT_DIRECTORIES`...
  would add to what it runs or reads), except `GIT_EXEC_PATH`, where the user's git keeps its
  own programs. `SSH_ASKPASS` goes too.
- No system or global configuration (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`):
  only the repository's own file is read, and each of its keys that can run a program or reach
  the network on the way of `rev-parse` or `cat-file` is overruled on the command line, where
  git gives the last word:
  - a partial clone's promisor remote (`extensions.partialClone`, `remote.*.promisor`) makes a
    missing object a `git fetch`: `GIT_NO_LAZY_FETCH=1` (git 2.44+) stops it, and since an
    older git ignores that, no transport is allowed either (`GIT_ALLOW_PROTOCOL` empty,
    `protocol.allow=never`), which stops the fetch before `core.sshCommand`, `core.gitProxy`,
    `remote.*.uploadpack`, `remote.*.vcs` (a remote helper), `url.*.insteadOf`, `http.*` or
    `credential.helper` is consulted; those that would run a program are neutralised besides
    (`core.sshCommand=false`, `credential.helper=` empties the list, `core.askPass=`,
    `GIT_ASKPASS` empty so that no configured asker is looked for, `GIT_TERMINAL_PROMPT=0`);
  - `core.fsmonitor` runs its hook when the index is read (a revision written `:path` reads
    it): `core.fsmonitor=false`;
  - hooks (`core.hooksPath`): none of these commands has one; `core.hooksPath=/dev/null`
    keeps it so;
  - `core.pager` / `pager.<command>` run only with a terminal on stdout, which git never has
    here (pipes), and `--no-pager` says so;
  - `include.path` / `includeIf` only read files (a FIFO that never answers is ended at
    --timeout; git runs in a session of its own, so `/dev/tty` cannot be opened);
  - replace refs (`refs/replace/`) would substitute objects: `GIT_NO_REPLACE_OBJECTS=1`;
  - filters, textconv, diff drivers, `gpg.program`, `core.editor`, `core.alternateRefsCommand`,
    `uploadpack.*`, maintenance and gc are consulted by other commands only.

Alternates (`objects/info/alternates`) are followed only where they stay inside the checkout
or its git directory (`revision.refuse_borrowed_objects`): elsewhere they are another
repository of the machine, whose manifests would be written into the cache and quoted. So is a
`.git` file, link or `commondir` naming one (`git_directory.py`; a linked worktree or submodule
names the checkout back).
Every object read is checked against its id, and the cache is kept per repository.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from featcheck.boundary import TrustContext
from featcheck.cargo.process import NEUTRAL_DIRECTORY, kill_group, open_process
from featcheck.comparison.git_directory import check_git_directory
from featcheck.deadline import Deadline
from featcheck.errors import FeatcheckError
from featcheck.featureset import AuditOptions

GUARDED_ENVIRONMENT = {
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ALLOW_PROTOCOL": "",
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_ASKPASS": "",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_ATTR_NOSYSTEM": "1",
    "LC_ALL": "C",  # git's messages in English, for the one featcheck recognises
}

GUARD_ARGUMENTS = (
    "--no-pager",
    *("-c", "protocol.allow=never"),
    *("-c", "core.fsmonitor=false"),
    *("-c", "core.hooksPath=" + os.devnull),
    *("-c", "core.sshCommand=false"),
    *("-c", "core.askPass="),
    *("-c", "credential.helper="),
)

_CHUNK = 1 << 20
_STDERR_KEPT = 4096


READING = "reading the revision from git"


class Budget(Deadline):
    def spent(self, doing: str = READING, hint: str = "") -> FeatcheckError:
        return FeatcheckError(
            f"--new-since: {doing} took longer than --timeout ({self.seconds:g} s)"
        )


class Git:
    """One git process started by `start_git`: its stdout read within a deadline, never more
    than the caller allows."""

    def __init__(self, process: subprocess.Popen[bytes], budget: Budget) -> None:
        self._process = process
        self._budget = budget
        self._buffer = bytearray()
        self._stdout_open = True
        self._stderr = bytearray()
        self._sender: threading.Thread | None = None
        self._selector = selectors.DefaultSelector()
        assert process.stdout is not None and process.stderr is not None
        self._selector.register(process.stdout, selectors.EVENT_READ)
        self._selector.register(process.stderr, selectors.EVENT_READ)

    def ask(self, requests: list[bytes]) -> None:
        """Send request lines (a batch process) from a thread of their own, while the caller
        reads the answers: git answers as it reads, so neither side waits on a full pipe."""
        if self._sender is not None:
            self._sender.join(timeout=max(self._budget.left(), 0.001))
            if self._sender.is_alive():
                self._timed_out()
        data = b"".join(request + b"\n" for request in requests)
        self._sender = threading.Thread(target=self._send, args=(data,), daemon=True)
        self._sender.start()

    def _send(self, data: bytes) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        with contextlib.suppress(OSError, ValueError):  # git ended, or was ended: it says why
            stdin.write(data)
            stdin.flush()

    def complaint(self) -> str:
        """What git said on stderr before its stdout ended (it is ended now)."""
        self._pump(stop_at_stdout=False)
        self.close()
        return self._stderr.decode("utf-8", "replace")

    def read_line(self, limit: int) -> bytes | None:
        """The next line without its newline; None at the end of the output."""
        while True:
            end = self._buffer.find(b"\n", 0, limit + 1)
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                return line
            if len(self._buffer) > limit:
                raise FeatcheckError("--new-since: git answered with a line too long to be one")
            if not self._pump(stop_at_stdout=True):
                return None

    def read_exact(self, size: int) -> bytes | None:
        """The next `size` bytes; None where the output ends first."""
        while len(self._buffer) < size:
            if not self._pump(stop_at_stdout=True):
                return None
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def finish(self, limit: int) -> tuple[int, bytes, str]:
        """Its exit status, the rest of its stdout (at most `limit` bytes) and its stderr."""
        if self._process.stdin is not None:
            with contextlib.suppress(OSError):
                self._process.stdin.close()
        while self._pump(stop_at_stdout=True):
            if len(self._buffer) > limit:
                self.close()
                raise FeatcheckError("--new-since: git answered more than was asked for")
        self._pump(stop_at_stdout=False)  # the rest of stderr
        try:
            status = self._process.wait(timeout=max(self._budget.left(), 0.001))
        except subprocess.TimeoutExpired:
            self._timed_out()
        self.close()
        return status, bytes(self._buffer), self._stderr.decode("utf-8", "replace")

    def close(self) -> None:
        if self._process.poll() is None:
            kill_group(self._process)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout=5)
        if self._sender is not None:
            self._sender.join(timeout=5)  # its pipe is broken now
            self._sender = None
        self._selector.close()
        for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def _pump(self, *, stop_at_stdout: bool) -> bool:
        """Read both pipes: until stdout gives more (True) or ends (False) with
        `stop_at_stdout`, else until both end."""
        while self._selector.get_map():
            if stop_at_stdout and not self._stdout_open:
                return False
            left = self._budget.left()
            if left <= 0:
                self._timed_out()
            for key, _ in self._selector.select(left):
                data = os.read(key.fd, _CHUNK)
                is_stdout = key.fileobj is self._process.stdout
                if not data:
                    self._selector.unregister(key.fileobj)
                    self._stdout_open = self._stdout_open and not is_stdout
                elif is_stdout:
                    self._buffer += data
                    if stop_at_stdout:
                        return True
                elif len(self._stderr) < _STDERR_KEPT:
                    self._stderr += data[: _STDERR_KEPT - len(self._stderr)]
        return False

    def _timed_out(self) -> NoReturn:
        self.close()
        raise self._budget.spent()


def start_git(
    repository: Path,
    arguments: list[str],
    budget: Budget,
    trust: TrustContext,
    *,
    batch: bool = False,
) -> Git:
    """`batch`: its stdin takes requests (`Git.ask`)."""
    if os.name != "posix":
        raise FeatcheckError("--new-since reads git objects on POSIX systems (Linux, macOS) only")
    git = shutil.which("git")
    if git is None:
        raise FeatcheckError("--new-since needs git on PATH")
    # The user asked to audit this repository: git may read it whoever owns it (a CI
    # container's checkout often belongs to another user), and obeys nothing of it (above).
    trusted = ["-c", f"safe.directory={os.path.abspath(repository)}"]
    command = [git, *GUARD_ARGUMENTS, *trusted, "-C", os.path.abspath(repository), *arguments]
    inherited = {
        name: value
        for name, value in os.environ.items()
        if (not name.startswith("GIT_") or name == "GIT_EXEC_PATH") and name != "SSH_ASKPASS"
    }
    try:
        process = open_process(
            command,
            trust=trust,
            cwd=NEUTRAL_DIRECTORY,
            env={**inherited, **GUARDED_ENVIRONMENT},
            stdin=subprocess.PIPE if batch else subprocess.DEVNULL,
        )
    except FeatcheckError as error:
        raise FeatcheckError(f"--new-since: {error.message}") from None
    return Git(process, budget)


def first_line(stderr: str) -> str:
    """git's first line of complaint, as one printable line (it may quote the repository)."""
    for line in stderr.splitlines():
        text = "".join(c if c.isprintable() else "?" for c in line.strip())[:300]
        if text:
            return text.removeprefix("fatal: ").removeprefix("error: ")
    return "no reason given"


DEFAULT_TIMEOUT: float = AuditOptions._field_defaults["timeout"]


@dataclass(frozen=True)
class Revision:
    """A commit, as the user named it and as git resolved it."""

    name: str
    commit: str
    git_directory: Path
    """The repository's (common) git directory, resolved: whose objects these are."""

    @property
    def label(self) -> str:
        """`main (1a2b3c4d)`, or the short commit alone when that is what was named."""
        short = self.commit[:8]
        return short if self.commit.startswith(self.name) else f"{self.name} ({short})"


def resolve_revision(
    repository: Path, name: str, trust: TrustContext, *, timeout: float = DEFAULT_TIMEOUT
) -> Revision:
    if not name or name.startswith("-") or "\x00" in name:
        raise FeatcheckError(f"--new-since: `{name}` is not a revision")
    check_git_directory(repository, trust)
    arguments = ["rev-parse", "--git-common-dir", "--is-shallow-repository", "--verify"]
    arguments += ["--quiet", "--end-of-options", f"{name}^{{commit}}"]
    git = start_git(repository, arguments, Budget(timeout), trust)
    try:
        status, output, stderr = git.finish(1 << 16)
    finally:
        git.close()  # also when featcheck is interrupted: git has a session of its own
    lines = output.split(b"\n")
    commit = lines[2] if len(lines) == 4 and lines[3] == b"" else b""
    if status == 0 and len(commit) in (40, 64) and all(c in b"0123456789abcdef" for c in commit):
        common = Path(os.path.realpath(repository / os.fsdecode(lines[0])))
        return Revision(name, commit.decode("ascii"), common)
    complaint = [line for line in stderr.splitlines() if line.startswith(("fatal:", "error:"))]
    if any("expected commit type" in line for line in complaint):
        raise FeatcheckError(
            f"--new-since: `{name}` is not a commit (git: {first_line(complaint[0])})"
        )
    if "dubious ownership" in stderr:
        raise FeatcheckError(
            "--new-since: git refuses this repository: it belongs to another user, and "
            "featcheck runs git without your global configuration, where `safe.directory` "
            "could allow it; run featcheck as the repository's owner",
            path=repository,
        )
    if complaint:
        raise FeatcheckError(
            f"--new-since: git cannot read this repository: {first_line(complaint[0])}",
            path=repository,
        )
    # Only a shallow clone may lack a commit the user knows: say how to get more of it.
    shallow = len(lines) > 1 and lines[1] == b"true"
    hint = " (this clone is shallow: fetch the history first, e.g. git fetch --unshallow)"
    raise FeatcheckError(
        f"--new-since: `{name}` is not a commit of this repository{hint if shallow else ''}"
    )
