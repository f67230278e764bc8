"""What a `MetadataSource` answers, read into the workspace model.

The half of `sources.py` that loads once cargo has started: the model's parser brings
`dataclasses`, which the path before cargo starts does without (cargo/pending_metadata.py).
"""

from __future__ import annotations

from pathlib import Path

from featcheck.cargo.pending_metadata import PendingMetadata
from featcheck.sources import MetadataSource
from featcheck.workspace.workspace import Workspace, parse_metadata


def workspace_of(pending: PendingMetadata) -> Workspace:
    """The workspace, once the source has answered; its failure as a FeatcheckError."""
    return pending.result(parse_metadata)


def read_workspace(
    source: MetadataSource,
    manifest_path: Path,
    *,
    all_features: bool = False,
    features: tuple[str, ...] = (),
) -> Workspace:
    """The workspace of `manifest_path`, waited for. `all_features` (and `features`,
    `dependency/feature` values) resolve with every member feature on, so that the resolve
    lists every optional dependency a feature selection can turn on (plain metadata leaves out
    those nothing enables by default)."""
    pending = source.start_metadata(manifest_path, all_features=all_features, features=features)
    return workspace_of(pending)
