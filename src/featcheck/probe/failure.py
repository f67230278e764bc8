"""Why a probe build failed, in one line that says what to do."""

from __future__ import annotations

_NETWORK_SIGNS = (
    "failed to download",
    "could not resolve host",
    "couldn't resolve host",
    "failed to query replaced source",
    "network failure",
    "spurious network error",
    "failed to get `",
    "unable to update registry",
    "failed to update registry",
    "download of ",
)
_OFFLINE_SIGNS = (
    "--offline was specified",
    "attempting to make an http request, but --offline",
    "offline mode",
)


def classify_build_failure(stderr: str, *, offline: bool) -> str:
    """One line saying why cargo failed, with what to do."""
    lowered = stderr.lower()
    first = next(
        (line.strip() for line in stderr.splitlines() if line.strip().startswith("error")),
        (stderr.strip().splitlines() or ["no message"])[-1].strip(),
    )
    if "linker `" in lowered and "not found" in lowered:
        return (
            f"no C toolchain: cargo could not find the linker ({first}); install one "
            "(Debian/Ubuntu: build-essential; macOS: xcode-select --install)"
        )
    if any(sign in lowered for sign in _OFFLINE_SIGNS) or (
        offline and "failed to get `" in lowered
    ):
        return (
            "the local registry cache lacks crates the probe needs, and --offline keeps cargo "
            f"off the network ({first}); run once with network access"
        )
    if any(sign in lowered for sign in _NETWORK_SIGNS):
        return (
            "cargo could not download crates the probe needs: no network? "
            f"({first}); with a filled registry cache, --offline works without one"
        )
    if "could not compile `featcheck-rule-probe`" in lowered:
        return f"the probe program does not compile against this crate version: {first}"
    if "error[e" in lowered or "could not compile `featcheck-probe`" in lowered:
        return (
            "the probe crate does not compile against this burn version (it is written for "
            f"burn 0.22 and builds on 0.22.1 and 0.23.0-pre.1): {first}"
        )
    return f"cargo failed: {first}"
