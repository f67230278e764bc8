"""`cargo metadata`-shaped documents for unit tests: packages, declarations, resolved edges."""

from __future__ import annotations

from typing import Any

CRATES_IO = "registry+https://github.com/rust-lang/crates.io-index"


def declaration_entry(name: str, **fields: Any) -> dict[str, Any]:
    decl: dict[str, Any] = {
        "name": name,
        "req": fields.pop("req", "*"),
        "kind": None,
        "rename": None,
        "optional": False,
        "uses_default_features": True,
        "features": [],
        "target": None,
    }
    decl.update(fields)
    return decl


class MetadataBuilder:
    """Builds `cargo metadata`-shaped JSON: packages, declarations and resolved edges."""

    def __init__(self) -> None:
        self.packages: list[dict[str, Any]] = []
        self.nodes: dict[str, list[dict[str, Any]]] = {}

    def package(
        self,
        name: str,
        features: dict[str, list[str]] | None = None,
        decls: list[dict[str, Any]] | None = None,
        version: str = "1.0.0",
        proc_macro: bool = False,
        member: bool = False,
    ) -> str:
        package_id = (
            f"path+file:///ws/{name}#{version}" if member else f"{CRATES_IO}#{name}@{version}"
        )
        kind = "proc-macro" if proc_macro else "lib"
        self.packages.append(
            {
                "name": name,
                "version": version,
                "id": package_id,
                "source": None if member else CRATES_IO,
                "edition": "2021",
                "manifest_path": f"/ws/{name}/Cargo.toml",
                "features": features or {},
                "dependencies": decls or [],
                "targets": [{"kind": [kind], "name": name.replace("-", "_")}],
            }
        )
        self.nodes[package_id] = []
        return package_id

    def edge(
        self, parent: str, child: str, *kinds: tuple[str | None, str | None], name: str = ""
    ) -> None:
        child_name = next(p["name"] for p in self.packages if p["id"] == child)
        self.nodes[parent].append(
            {
                "name": name or child_name.replace("-", "_"),
                "pkg": child,
                "dep_kinds": [{"kind": k, "target": t} for k, t in (kinds or [(None, None)])],
            }
        )

    def metadata(self, root: str | None = None) -> dict[str, Any]:
        members = [p["id"] for p in self.packages if p["source"] is None]
        nodes = [
            {"id": i, "deps": deps, "dependencies": [d["pkg"] for d in deps]}
            for i, deps in self.nodes.items()
        ]
        return {
            "packages": self.packages,
            "workspace_members": members,
            "workspace_root": "/ws",
            "resolve": {"nodes": nodes, "root": root},
        }
