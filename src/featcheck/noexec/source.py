"""The files source (`--no-exec`): the workspace from the manifests, Cargo.lock and the local
registry, cfg from built-in tables. It starts no process, and has no way to start one."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from featcheck.boundary import TrustContext
from featcheck.cargo.argv_gate import environment_rustflags
from featcheck.cargo.checkout_config import CheckoutConfig, read_checkout_config
from featcheck.cargo.pending_metadata import PendingMetadata
from featcheck.cargo.unification import Unification, decide
from featcheck.deadline import NO_DEADLINE, Deadline
from featcheck.featureset import AuditOptions
from featcheck.noexec.metadata import build_metadata
from featcheck.noexec.targets import builtin_cfg, detect_host_triple, with_rustflags
from featcheck.semantics.cfg import TargetCfg


def file_source(workdir: Path, options: AuditOptions, trust: TrustContext) -> FileSource:
    """`--no-exec`'s source, read within the audit's `--timeout` from now."""
    return FileSource(workdir, trust, Deadline(options.timeout))


class FileSource:
    """A `MetadataSource` (cargo/pending_metadata.py) that reads files only."""

    def __init__(
        self, workdir: Path, trust: TrustContext, deadline: Deadline = NO_DEADLINE
    ) -> None:
        trust.refuse_outside_tree(workdir)
        self.workdir = workdir
        self.trust = trust
        self.deadline = deadline
        self.checkout: Path = trust.root
        self._host: str | None = None
        self._cfg_cache: dict[str, TargetCfg] = {}
        self._config: CheckoutConfig | None = None

    def start_metadata(
        self,
        manifest_path: Path,
        *,
        all_features: bool = False,
        features: tuple[str, ...] = (),
    ) -> PendingMetadata:
        """The workspace, read when the audit asks for it. Its resolve comes from Cargo.lock,
        which lists every optional dependency any feature turns on, so it serves every feature
        selection (the flags change nothing)."""
        return PendingMetadata(
            lambda _last, _parse: build_metadata(manifest_path, self.trust, self.deadline)
        )

    def host_triple(self) -> str:
        if self._host is None:
            self._host = detect_host_triple()
        return self._host

    def host_cfg(self) -> TargetCfg:
        """The built-in cfg table of the host (host units get no rustflags, as in cargo)."""
        return builtin_cfg(self.host_triple())

    def target_cfg(self, triple: str) -> TargetCfg:
        """The built-in cfg table of `triple`, with the rustflags cargo would give that target."""
        if triple not in self._cfg_cache:
            plain = builtin_cfg(triple)
            flags = environment_rustflags(os.environ)
            if flags is None:
                flags = self._checkout_config().rustflags(triple, plain)
            self._cfg_cache[triple] = with_rustflags(plain, flags) if flags else plain
        return self._cfg_cache[triple]

    def unification(self, show: Callable[[Path], str]) -> Unification:
        """What the configuration asks, with the toolchain's channel unknown (see `decide`)."""
        settings = self._checkout_config().unification
        return decide(settings, os.environ, None, show)

    def _checkout_config(self) -> CheckoutConfig:
        """The checkout's configuration, only read (nothing goes on the network)."""
        if self._config is None:
            self._config = read_checkout_config(
                self.workdir,
                os.environ,
                self.trust.cargo_home,
                offline=True,
                untrusted_home=self.trust.untrusted_cargo_home,
                root=self.checkout,
            )
        return self._config
