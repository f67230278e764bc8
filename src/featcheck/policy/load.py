"""Reading a workspace's configuration.

Three places are read, in this order; a later one wins for single values (`fail-on`, `targets`,
`configurations`, `each-feature`, each `severity` entry, a rule's `select`/`ignore` state) and
`allow` entries accumulate:

1. `[workspace.metadata.featcheck]` in the workspace root's Cargo.toml;
2. `[package.metadata.featcheck]` in a member's Cargo.toml (for that member's findings only);
3. `featcheck.toml` at the workspace root (the same keys at top level).

The schema is strict: an unknown key, a value of the wrong type, an unknown rule code or an
allow entry without a reason is a `FeatcheckError` at the offending key or value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from featcheck.deadline import NO_DEADLINE, Deadline
from featcheck.errors import FeatcheckError
from featcheck.manifest.document import ManifestDocument, read_manifest
from featcheck.policy.sections import read_section
from featcheck.policy.settings import CONFIG_FILE, Config, Layer, merged
from featcheck.policy.user_rules import with_user_rules
from featcheck.rules import Catalogue
from featcheck.workspace.workspace import Workspace

_WORKSPACE_SECTION = ("workspace", "metadata", "featcheck")
_MEMBER_SECTION = ("package", "metadata", "featcheck")


def load_config(
    workspace_root: Path,
    member_manifests: Mapping[str, Path],
    read_document: Callable[[Path], ManifestDocument] | None = None,
    checkout: Path | None = None,
    deadline: Deadline = NO_DEADLINE,
) -> Config:
    """Read and merge the configuration of a workspace.

    `member_manifests` maps each member's package name to its Cargo.toml. Missing files are
    skipped (`featcheck.toml` is optional). Raises FeatcheckError, at the offending key or
    value, for anything that is not valid configuration. `read_document` reads a manifest (the
    audit passes its cache, so that no manifest is parsed twice). `checkout`: the root that no
    link on the way to `featcheck.toml` may leave (boundary.py), nor any path it configures.
    Each member's manifest is read within `deadline`.
    """
    documents = _Documents(read_document, checkout)
    root_manifest = workspace_root / "Cargo.toml"
    config_file = workspace_root / CONFIG_FILE
    if config_file.exists() and not config_file.is_file():
        raise FeatcheckError("is not a file", path=config_file)
    sections: list[tuple[ManifestDocument, tuple[str, ...]]] = []
    if root_manifest.is_file():
        sections.append((documents.read(root_manifest), _WORKSPACE_SECTION))
    if config_file.is_file():
        sections.append((documents.read(config_file), ()))
    # The project's own rules first: `select`, `severity` and `allow` may name them.
    catalogue = Catalogue.builtin()
    for doc, prefix in sections:
        catalogue = with_user_rules(doc, prefix, catalogue)
    layers = {
        prefix: read_section(doc, prefix, None, catalogue, checkout) for doc, prefix in sections
    }
    workspace_layer = layers.get(_WORKSPACE_SECTION, Layer())
    file_layer = layers.get((), Layer())

    workspace = merged(merged(Config(catalogue=catalogue), workspace_layer), file_layer)
    members: dict[str, Config] = {}
    for name, manifest in member_manifests.items():
        deadline.check("reading the members' settings")
        if not manifest.is_file():
            continue
        layer = read_section(documents.read(manifest), _MEMBER_SECTION, name, catalogue, checkout)
        if layer != Layer():
            own = Config(member=name, catalogue=catalogue)
            members[name] = merged(merged(merged(own, workspace_layer), layer), file_layer)
    return replace(workspace, members=members)


class _Documents:
    """Each file read and parsed once; Cargo.toml files through the audit's reader if given."""

    def __init__(
        self, read_document: Callable[[Path], ManifestDocument] | None, checkout: Path | None
    ) -> None:
        self._read_document = read_document
        self._checkout = checkout
        self._parsed: dict[Path, ManifestDocument] = {}

    def read(self, path: Path) -> ManifestDocument:
        if self._read_document is not None and path.name == "Cargo.toml":
            return self._read_document(path)
        key = path.resolve()
        if key not in self._parsed:
            self._parsed[key] = read_manifest(path, root=self._checkout)
        return self._parsed[key]


def members_with_settings(metadata: Workspace) -> dict[str, Path]:
    """The manifest of each member that may hold `[package.metadata.featcheck]`, by name.

    cargo's metadata carries each package's `[package.metadata]` table (null without one), so
    the other members' manifests need not be read; a description without that entry
    (`--no-exec` builds its own) says nothing, and its member's manifest is read.
    """
    found: dict[str, Path] = {}
    for member in metadata.members:
        package = metadata.packages.document(member.id)
        if "metadata" in package:
            table = package["metadata"]
            if not isinstance(table, dict) or "featcheck" not in table:
                continue
        found[member.name] = member.manifest_path
    return found
