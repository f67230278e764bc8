"""cargo's refusal of a workspace, at the place in the checkout that causes it.

cargo names a package, or the member whose manifests it was loading, and rarely a line: "package
`app` depends on `memchr` with feature `nosuch`", "failed to load manifest for workspace member
`app`" (about a path dependency of app's), "no matching package named `memchrr` found". Where
cargo has refused, featcheck reads what it reads anyway (the workspace's members, their
manifests, through the checkout's bounds) and names the file, line and column: its own one-line
error for a manifest it cannot read, else cargo's words at the line they are about.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

from featcheck.errors import FeatcheckError
from featcheck.locate import ManifestCache
from featcheck.manifest.declarations import all_sites
from featcheck.manifest.document import ManifestDocument
from featcheck.manifest.spans import Entry
from featcheck.noexec.files import lock_entries
from featcheck.noexec.workspace import discover_workspace

_MISSING_FEATURE = re.compile(r"package `([^`]+)` depends on `([^`]+)` with feature `([^`]+)` but")
_NO_PACKAGE = re.compile(r"no matching package named `([^`]+)` found")
_INCLUDES = re.compile(r"feature `([^`]+)` includes `([^`]+)`")
# cargo's words, and --no-exec's (which quote the whole key).
_CFG = re.compile(
    r"failed to parse `(.+?)` as a cfg expression|invalid cfg expression `cfg\((.*)\)`"
)


def located(error: FeatcheckError, manifest: Path, manifests: ManifestCache) -> FeatcheckError:
    """`error`, cargo's refusal of the workspace of `manifest`, where featcheck can place it."""
    if error.line is not None:
        return error
    try:
        layout = discover_workspace(manifest, manifests.checkout)
        root_path = layout.root / "Cargo.toml"
        root = manifests.get(root_path)
        paths = [member / "Cargo.toml" for member in layout.members]
        documents = [(path, manifests.get(path)) for path in paths]
        if "failed to parse lock file" in error.message:  # where its TOML breaks
            _lock_toml(layout.root / "Cargo.lock", manifests)
    except FeatcheckError as own:  # featcheck's own words, at the place, where it has one
        return own if own.path is not None else error
    except (OSError, ValueError):
        return error
    for path, document in documents:
        with suppress(ValueError):  # the span index gives up on some odd layouts
            found = _cause(error.message, document, root)
            if found is not None:
                written, entry, message = found
                where = root_path if written is root else path
                return FeatcheckError(
                    message, path=where, line=entry.key.line, column=entry.key.column
                )
    return error


def _lock_toml(path: Path, manifests: ManifestCache) -> None:
    """featcheck's one line where Cargo.lock is not TOML; nothing of what else cargo refuses."""
    try:
        lock_entries(path, manifests.checkout)
    except FeatcheckError as error:
        if error.message.startswith("invalid TOML"):
            raise


Place = tuple[ManifestDocument, Entry, str]
"""The manifest a refusal is about, the entry it points at, and the words to say."""


def _feature_values(document: ManifestDocument) -> Iterator[tuple[str, str, Entry]]:
    """Each `[features]` value of `document` with where it is written: (feature, value, entry)."""
    features = document.get("features")
    for name, values in (features if isinstance(features, dict) else {}).items():
        for index, value in enumerate(values if isinstance(values, list) else ()):
            entry = document.spans.get(("features", name, index))
            if isinstance(value, str) and entry is not None:
                yield name, value, entry


def _feature_asked(
    document: ManifestDocument, root: ManifestDocument, dependency: str, feature: str
) -> tuple[ManifestDocument, Entry] | None:
    """Where `document` asks `dependency` (its real name) for `feature`: in a declaration's own
    `features`, in the `[workspace.dependencies]` entry it inherits, or in a `[features]`
    value `key/feature`."""
    for site in all_sites(document, root):
        if site.package != dependency:
            continue
        for written in (site, site.inherited):
            value = None if written is None else written.value
            asked = value.get("features") if isinstance(value, dict) else None
            if written is not None and isinstance(asked, list) and feature in asked:
                path = (*written.path, "features", asked.index(feature))
                if (entry := written.manifest.spans.get(path)) is not None:
                    return written.manifest, entry
        prefixed = {f"{site.key}/{feature}", f"{site.key}?/{feature}"}
        for _, value, entry in _feature_values(document):
            if value in prefixed:
                return document, entry
    return None


def _cause(message: str, document: ManifestDocument, root: ManifestDocument) -> Place | None:
    """The line of `document` (or of the root it inherits from) cargo's `message` is about."""
    if (match := _MISSING_FEATURE.search(message)) is not None:
        package, dependency, feature = match.groups()
        mine = package == document.get("package", "name")
        found = _feature_asked(document, root, dependency, feature) if mine else None
        return None if found is None else (*found, message)
    if (match := _CFG.search(message)) is not None:  # a `[target.'cfg(...)']` key
        return _cfg_key(" ".join((match.group(1) or match.group(2)).split()), document, message)
    sites = all_sites(document, root)
    if (match := _INCLUDES.search(message)) is not None:  # `dep:nosuch` in `[features]`
        feature, named = match.groups()
        places = (e for f, v, e in _feature_values(document) if (f, v) == (feature, named))
        return next(((document, entry, message) for entry in places), None)
    if "A non-optional dependency of the same name" in message:  # cargo's last line only
        optional = {s.key for s in sites if isinstance(s.value, dict) and s.value.get("optional")}
        for feature, value, entry in _feature_values(document):
            key, weak, _ = value.partition("?/")
            if weak and key in {s.key for s in sites} - optional:
                said = f"feature `{feature}` includes `{value}` with a `?`"
                return document, entry, f"{said}, but `{key}` is not an optional dependency"
        return None
    missing = _NO_PACKAGE.search(message)
    for site in sites:
        if (written := document.spans.get(site.path)) is None:
            continue
        if site.inherits and site.inherited is None:  # cargo: "was not found in ..."
            said = f"`{site.key}` inherits from [workspace.dependencies], which has no `{site.key}`"
            return document, written, f"{said} (cargo refuses this workspace)"
        if missing is not None and site.package == missing.group(1):
            return document, written, message
    return None


def _cfg_key(expression: str, document: ManifestDocument, message: str) -> Place | None:
    """The `[target]` key whose cfg is `expression`, with cargo's words, or --no-exec's whole."""
    targets = document.get("target")
    for key in targets if isinstance(targets, dict) else ():
        written = str(key)
        inner = " ".join(written.removeprefix("cfg(").removesuffix(")").split())
        entry = document.spans.get(("target", written))
        if written.startswith("cfg(") and inner == expression and entry is not None:
            own = f"`{written}`: not a cfg expression cargo reads (cargo refuses this manifest)"
            return document, entry, message if "failed to parse" in message else own
    return None
