"""Where cargo may send credentials: the user's own configuration says, never the checkout's."""

from __future__ import annotations

from featcheck.cargo.config_allow_list import Leaf
from featcheck.cargo.config_files import setting_error
from featcheck.errors import FeatcheckError
from featcheck.manifest.document import ManifestDocument


def registry_key(name: str) -> str:
    return name.upper().replace("-", "_")


class CredentialPolicy:
    """Where cargo may send credentials is the user's to say, never the checkout's.

    cargo finds a registry's token by the registry's *name* (CARGO_REGISTRIES_<NAME>_TOKEN,
    credentials.toml, a credential provider), and `--config` beats the user's own definition
    of that name: a checkout's `[registries.NAME] index` would make cargo send the user's token
    for NAME to the checkout's host, and a checkout's remote `[source.NAME] registry` (one that
    nothing replaces) would make cargo fetch from, and authenticate to, a host it names. So:
    a registry the user defines keeps the user's definition (the checkout's is dropped); one
    only the checkout defines, and a remote source of the checkout that nothing replaces, are
    refused unless cargo stays offline. Local sources (`directory`, `local-registry`: what
    `cargo vendor` writes) and `replace-with` pass; credential providers never do.
    """

    def __init__(self, user_registries: frozenset[str]) -> None:
        self._user = user_registries
        self._refused: list[FeatcheckError] = []
        self._remote_sources: dict[str, FeatcheckError] = {}
        self._replaced: set[str] = set()

    def admits(self, leaf: Leaf, document: ManifestDocument) -> bool:
        """Whether `leaf` goes to cargo (a refusal is kept for `refuse_remote_definitions`)."""
        section = leaf.key[0]
        if section == "registries":
            name = leaf.key[1]
            if registry_key(name) in self._user or name == "crates-io":
                return name == "crates-io"  # the user's definition stands
            self._refused.append(
                setting_error(
                    document,
                    leaf.key,
                    f"`[registries.{_printable(name)}]` is defined by the checkout: featcheck "
                    "lets only your own cargo configuration say where cargo sends a registry's "
                    "credentials; define it in $CARGO_HOME/config.toml (or CARGO_REGISTRIES_"
                    f"{registry_key(_printable(name))}_INDEX), audit with --offline, "
                    "or pass --trust-checkout",
                )
            )
        elif section == "source" and leaf.key[2] == "replace-with":
            self._replaced.add(leaf.key[1])
        elif section == "source" and leaf.key[2] == "registry":
            self._remote_sources.setdefault(
                leaf.key[1],
                setting_error(
                    document,
                    leaf.key,
                    f"`[source.{_printable(leaf.key[1])}]` in the checkout names a remote "
                    "registry that cargo would fetch from and send credentials to: featcheck "
                    "takes remote sources only from your own cargo configuration; define it "
                    "there, audit with --offline, or pass --trust-checkout",
                ),
            )
        return True

    def refuse_remote_definitions(self) -> None:
        """Raise the first refusal: cargo would go on the network."""
        refused = self._refused + [
            error for name, error in self._remote_sources.items() if name not in self._replaced
        ]
        if refused:
            raise refused[0]


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text[:60])
