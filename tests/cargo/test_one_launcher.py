"""Every process featcheck starts starts in one launcher, which takes the run's trust context.

A new capability that started cargo, git or a build its own way would meet the checkout with a
boundary of its own: this test reads every module of the package and fails for any call that
starts a process outside `featcheck.cargo.process`.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import featcheck
from featcheck.cargo import process

PACKAGE = Path(featcheck.__file__).parent
LAUNCHER = PACKAGE / "cargo" / "process.py"

_STARTERS = {
    "subprocess": {"Popen", "run", "call", "check_call", "check_output", "getoutput"},
    "os": {"system", "popen", "posix_spawn", "posix_spawnp", "fork", "forkpty"}
    | {f"exec{suffix}" for suffix in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")}
    | {f"spawn{suffix}" for suffix in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")},
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
    "pty": {"spawn", "fork"},
}


def _process_starts(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in _STARTERS:
            for alias in node.names:
                if alias.name in _STARTERS[node.module]:
                    found.append(f"{path.name}:{node.lineno} imports {node.module}.{alias.name}")
        called = node.func if isinstance(node, ast.Call) else None
        if (
            isinstance(called, ast.Attribute)
            and isinstance(called.value, ast.Name)
            and called.attr in _STARTERS.get(called.value.id, ())
        ):
            found.append(f"{path.name}:{node.lineno} {called.value.id}.{called.attr}()")
    return found


def test_only_the_launcher_starts_processes() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 100
    elsewhere = [
        start for module in modules if module != LAUNCHER for start in _process_starts(module)
    ]
    assert elsewhere == []
    assert _process_starts(LAUNCHER)  # the launcher itself is seen by this test


def test_the_launcher_requires_the_trust_context() -> None:
    parameter = inspect.signature(process.start_process).parameters["trust"]
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
    assert parameter.default is inspect.Parameter.empty
