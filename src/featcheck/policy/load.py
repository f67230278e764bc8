"""Reading a workspace's configuration: `[workspace.metadata.featcheck]`, then a member's
`[package.metadata.featcheck]` (its findings only), then `featcheck.toml`, a later place winning
for single values while `allow` entries add up (README, "Configuration and suppressions"). Each
is checked strictly (sections.py); its `[[rule]]` entries are the project's own rules."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from featcheck.boundary import checkout_root
from featcheck.deadline import NO_DEADLINE, Deadline
from featcheck.errors import FeatcheckError
from featcheck.manifest.document import ManifestDocument, read_manifest
from featcheck.noexec.workspace import discover_workspace
from featcheck.policy.sections import SectionReader
from featcheck.policy.settings import CONFIG_FILE, Config, Layer, merged
from featcheck.rules import UNUSED_SUPPRESSION, Catalogue, Rule, find_by_code
from featcheck.rules.load import parse_rule
from featcheck.rules.spec import SpecError
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
    """Read and merge the configuration of a workspace (`member_manifests`: each member's
    Cargo.toml by name; missing files are skipped). `read_document`: the audit's cache, so that
    no manifest is parsed twice. `checkout`: the root that no link on the way to
    `featcheck.toml` may leave (boundary.py), nor any path it configures."""

    def read(path: Path) -> ManifestDocument:
        if read_document is not None and path.name == "Cargo.toml":
            return read_document(path)  # each is parsed once there
        return read_manifest(path, root=checkout)

    root_manifest = workspace_root / "Cargo.toml"
    config_file = workspace_root / CONFIG_FILE
    if config_file.exists() and not config_file.is_file():
        raise FeatcheckError("is not a file", path=config_file)
    sections: list[tuple[ManifestDocument, tuple[str, ...]]] = []
    if root_manifest.is_file():
        sections.append((read(root_manifest), _WORKSPACE_SECTION))
    if config_file.is_file():
        sections.append((read(config_file), ()))
    # The project's own rules first: `select`, `severity` and `allow` may name them.
    catalogue = Catalogue.builtin()
    for doc, prefix in sections:
        catalogue = with_user_rules(doc, prefix, catalogue)
    layers = {
        prefix: SectionReader(doc, prefix, None, catalogue, checkout).layer()
        for doc, prefix in sections
    }
    workspace_layer = layers.get(_WORKSPACE_SECTION, Layer())
    file_layer = layers.get((), Layer())

    workspace = merged(merged(Config(catalogue=catalogue), workspace_layer), file_layer)
    members: dict[str, Config] = {}
    for name, manifest in member_manifests.items():
        deadline.check("reading the members' settings")
        if not manifest.is_file():
            continue
        layer = SectionReader(read(manifest), _MEMBER_SECTION, name, catalogue, checkout).layer()
        if layer != Layer():
            own = Config(member=name, catalogue=catalogue)
            members[name] = merged(merged(merged(own, workspace_layer), layer), file_layer)
    return replace(workspace, members=members)


def members_with_settings(metadata: Workspace) -> dict[str, Path]:
    """The manifest of each member that may hold `[package.metadata.featcheck]`, by name.
    cargo's metadata carries each package's `[package.metadata]` table, so the others need not
    be read (see `PackageTable.may_hold_settings`)."""
    table = metadata.packages
    return {m.name: m.manifest_path for m in metadata.members if table.may_hold_settings(m.index)}


def with_user_rules(
    doc: ManifestDocument, prefix: tuple[str, ...], catalogue: Catalogue
) -> Catalogue:
    """`catalogue` plus the `[[rule]]` entries of the section at `prefix` of `doc`, each checked
    strictly."""
    table = doc.get(*prefix)
    if not isinstance(table, dict) or "rule" not in table:
        return catalogue
    reader = SectionReader(doc, prefix, None, catalogue)
    path = (*prefix, "rule")
    entries = table["rule"]
    if not isinstance(entries, list):
        raise reader.error("`rule` must be an array of tables ([[rule]] entries)", path)
    rules: list[Rule] = []
    for index, entry in enumerate(entries):
        try:
            rule = parse_rule(entry, builtin=False)
        except SpecError as error:
            raise reader.error(
                error.message, (*path, index, *error.path), at_key=error.at_key
            ) from None
        for key, value in (("code", rule.code), ("name", rule.name)):
            clash = find_by_code((*catalogue.rules, UNUSED_SUPPRESSION), value) or next(
                (r for r in rules if value in (r.code, r.name)), None
            )
            if clash is not None:  # FC900 is named by its code alone
                named = "" if clash is UNUSED_SUPPRESSION else f" `{clash.name}`"
                message = f"rule {key} `{value}` is taken by {clash.code}{named}"
                raise reader.error(message, (*path, index, key))
        rules.append(rule)
    return Catalogue((*catalogue.rules, *rules))


def project_catalogue(path: Path) -> Catalogue:
    """The built-in rules plus the `[[rule]]` entries of the project at or around `path`
    (`featcheck rules PATH`); its root is found as cargo finds it, from the nearest Cargo.toml
    upwards, and a directory with only a featcheck.toml counts as a root too."""
    path = path.absolute()
    directory = path if path.is_dir() else path.parent
    for candidate in (directory, *directory.parents):
        if (candidate / "Cargo.toml").is_file():
            layout = discover_workspace(candidate / "Cargo.toml")
            return load_config(layout.root, {}, checkout=layout.checkout).catalogue
        if (candidate / CONFIG_FILE).is_file():
            return load_config(candidate, {}, checkout=checkout_root(candidate)).catalogue
    return Catalogue.builtin()
