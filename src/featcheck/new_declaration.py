"""The `[dependencies]` line a fix writes for a crate it depends on directly."""

from __future__ import annotations

NEW_DECLARATIONS: frozenset[str] = frozenset(
    {
        "add-dependency",
        "add-optional-dependency",
        "inherit-dependency",
        "inherit-optional-dependency",
    }
)
"""Actions that write a new `[dependencies]` line: `version = ...` or `workspace = true` (the
crate's `[workspace.dependencies]` entry), made optional when a feature of the package turns
it on (`add-feature-values` then adds `dep:KEY` to that feature)."""


def declared_table(action: str, version: str, features: tuple[str, ...]) -> dict[str, object]:
    """The new line's value as TOML reads it."""
    inherits = action.startswith("inherit")
    table: dict[str, object] = {"workspace": True} if inherits else {"version": version}
    if action.endswith("optional-dependency"):
        table["optional"] = True
    if not inherits:
        # A `workspace = true` line cannot drop what the workspace entry keeps (an error since
        # edition 2024): only a line with its own version says it.
        table["default-features"] = False
    table["features"] = list(features)
    return table


def inline_table(table: dict[str, object]) -> str:
    """`{ version = "1", default-features = false, features = ["std"] }`."""
    parts = []
    for key, value in table.items():
        if isinstance(value, bool):
            parts.append(f"{key} = {str(value).lower()}")
        elif isinstance(value, list):
            parts.append(f"{key} = [" + ", ".join(f'"{f}"' for f in value) + "]")
        else:
            parts.append(f'{key} = "{value}"')
    return "{ " + ", ".join(parts) + " }"
