"""Recognise cargo's failures by their shape, not their exact words.

cargo rewords its messages between releases (1.95 prints "specificationm ... is ambiguous", older
releases word it otherwise), so each situation is recognised by the parts that carry meaning: the
`did not match`/`ambiguous` verdict, the indented `name@version` candidates, `nothing to print`.
"""

from __future__ import annotations

import enum
import re
from typing import NamedTuple

from featcheck.errors import FeatcheckError
from featcheck.render import safe_text


class FailureKind(enum.Enum):
    NO_MATCH = "no-match"
    """The package asked for is not in the graph (exit 101)."""
    AMBIGUOUS = "ambiguous"
    """Several versions match the package asked for (exit 101); `candidates` lists them."""
    NOTHING_TO_PRINT = "nothing-to-print"
    """The package is in the lockfile but filtered out by edge kinds or target (exit 0)."""
    LOCK_OUTDATED = "lock-outdated"
    """`--locked`/`--frozen` was given and Cargo.lock needs updating."""
    OFFLINE_MISSING = "offline-missing"
    """Offline, and something needed is not in the local cache."""
    GIT_FETCH = "git-fetch"
    """A git dependency could not be fetched (featcheck offers git no credentials)."""
    OTHER = "other"


class CargoFailure(NamedTuple):
    kind: FailureKind
    summary: str
    """cargo's own reason, on one line."""
    candidates: tuple[str, ...] = ()


_CANDIDATE = re.compile(r"^\s+([A-Za-z_][A-Za-z0-9_-]*@[0-9][^\s]*)\s*$")
_ERROR_LINE = re.compile(r"^\s*error(\[[^\]]*\])?:\s*(?P<text>.*)$")
_OS_ERROR = re.compile(r"\(os error \d+\)$")
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_LONGEST_SHOWN = 80
_PROGRESS = ("Updating", "Downloading", "Downloaded", "Locking", "Blocking", "Adding")


_SELECTION_REASON = re.compile(
    r"does not have that feature|is yanked|^versions that meet the requirements"
    r"|^previously selected package"
)


def printable(text: object) -> str:
    shown = CONTROL.sub(lambda m: f"\\u{{{ord(m.group()):x}}}", str(text))
    if len(shown) > _LONGEST_SHOWN:
        shown = shown[: _LONGEST_SHOWN - 1] + "…"
    return shown


def summarize(stderr: str) -> str:
    """cargo's reason for failing on one line: the error, then its place or its last cause,
    control characters escaped (cargo quotes manifest text, which may hold terminal escapes)."""
    lines = [line.rstrip() for line in stderr.splitlines() if line.strip()]
    errors = [(i, match) for i, line in enumerate(lines) if (match := _ERROR_LINE.match(line))]
    if not errors:
        useful = [line.strip() for line in lines if not line.lstrip().startswith(_PROGRESS)]
        return safe_text.printable(useful[-1]) if useful else "cargo failed without a message"
    first, match = errors[0]
    summary = [match["text"].strip() or lines[first].strip()]
    # "Caused by:" chains end with the most specific reason; a "-->" line names the place.
    rest = [line.strip() for line in lines[first + 1 :]]
    location = next((line for line in rest if line.startswith("-->")), None)
    # "failed to select a version" names only the crate; why, the lines below it: a missing
    # feature or a yanked version alone, else the versions a requirement allows, the one locked.
    reasons = [line for line in rest if _SELECTION_REASON.search(line)]
    decisive = [line for line in reasons if not line.startswith(("versions", "previously"))]
    if location:
        summary.append(location.removeprefix("-->").strip())
    elif reasons and summary[0].startswith("failed to select a version"):
        summary = [summary[0].rstrip("."), *(decisive[:1] or reasons)]
    elif "Caused by:" in rest:
        causes = [line for line in rest if line != "Caused by:"]
        if len(causes) > 1 and _OS_ERROR.search(causes[-1]):
            # `failed to read `…/helper/Cargo.toml``, then the system's error: the file is the
            # news, while the error above it names only where cargo started (the workspace
            # member whose path dependencies led there).
            return safe_text.printable(f"{causes[-2]}: {causes[-1]} ({summary[0]})")
        if causes:
            summary.append(causes[-1])
    return safe_text.printable(": ".join(summary))


def classify(stderr: str) -> CargoFailure:
    lowered = stderr.lower()
    summary = summarize(stderr)
    if "nothing to print" in lowered and "error" not in lowered:
        return CargoFailure(FailureKind.NOTHING_TO_PRINT, "nothing to print")
    if "ambiguous" in lowered:
        candidates = tuple(m[1] for line in stderr.splitlines() if (m := _CANDIDATE.match(line)))
        return CargoFailure(FailureKind.AMBIGUOUS, summary, candidates)
    if "did not match any packages" in lowered or (
        "package id specification" in lowered and "did not match" in lowered
    ):
        return CargoFailure(FailureKind.NO_MATCH, summary)
    if "--locked" in lowered or "--frozen" in lowered:
        return CargoFailure(FailureKind.LOCK_OUTDATED, summary)
    if "offline" in lowered and any(
        clue in lowered for clue in ("no matching package", "not available", "failed to download")
    ):
        return CargoFailure(FailureKind.OFFLINE_MISSING, summary)
    if "git fetch" in lowered or "failed to authenticate" in lowered:
        return CargoFailure(FailureKind.GIT_FETCH, summary)
    return CargoFailure(FailureKind.OTHER, summary)


_HINTS = {
    FailureKind.LOCK_OUTDATED: " (Cargo.lock is out of date; run `cargo update --workspace`)",
    FailureKind.OFFLINE_MISSING: " (run `cargo fetch` once with network, or drop --offline)",
    FailureKind.GIT_FETCH: " (featcheck offers git no credentials for a host the checkout "
    "names: where the dependency needs yours, run `cargo fetch` yourself first)",
}


class FeaturesRefused(FeatcheckError):
    """cargo resolved nothing with the features featcheck chose to ask for, and none of the
    failures above explains it: fewer features may resolve (diffsol's exclude each other)."""


def failure_error(what: str, stderr: str, *, features_chosen: bool = False) -> FeatcheckError:
    """`features_chosen`: featcheck, not the user, chose the features cargo was asked for."""
    failure = classify(stderr)
    message = f"{what} failed: {failure.summary}{_HINTS.get(failure.kind, '')}"
    if features_chosen and failure.kind is FailureKind.OTHER:
        return FeaturesRefused(message)
    return FeatcheckError(message)
