"""A rule over several crates words each finding for the crate it is about: FC004 on a CUDA
build speaks of burn-cuda, not of wgpu; FC005 of burn-cubecl, whose kernels every backend runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_in_process import run_in_process

pytestmark = pytest.mark.usefixtures("remembered_cargo")

BACKENDS = ("wgpu", "cuda", "rocm", "cpu")


def _project(tmp_path: Path, backend: str) -> Path:
    project = tmp_path / f"app-{backend}"
    (project / "src").mkdir(parents=True)
    (project / "src" / "main.rs").write_text("fn main() {}\n")
    (project / "Cargo.toml").write_text(
        "[package]\n"
        f'name = "app-{backend}"\n'
        'version = "0.1.0"\n'
        'edition = "2021"\n\n'
        "[workspace]\n\n"
        "[dependencies]\n"
        'burn = { version = "0.22.1", default-features = false, '
        f'features = ["std", "{backend}"] }}\n'
    )
    return project


def _why_lines(text: str) -> dict[str, str]:
    """The one-line why of each finding of the text report, by rule code, unwrapped."""
    found: dict[str, str] = {}
    code = ""
    lines = text.splitlines()
    for position, line in enumerate(lines):
        if line.startswith(("warning[", "error[", "info[")):
            code = line.split("[", 1)[1].split("]", 1)[0]
        if line.startswith("  = why: "):
            why = [line.removeprefix("  = why: ")]
            why += [more.strip() for more in _continuation(lines[position + 1 :])]
            found[code] = " ".join(why)
    return found


def _continuation(lines: list[str]) -> list[str]:
    taken = []
    for line in lines:
        if not line.startswith(" " * 9):
            break
        taken.append(line)
    return taken


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_gpu_rules_why_names_the_backend_selected(
    backend: str, tmp_path: Path, synthetic_cargo: Path
) -> None:
    project = _project(tmp_path, backend)
    options = ("--target", "x86_64-unknown-linux-gnu")
    text = run_in_process(str(project), *options, columns=100)
    assert text.returncode == 1, text.stdout + text.stderr
    whys = _why_lines(text.stdout)
    assert set(whys) == {"FC004", "FC005"}, text.stdout
    crate = f"burn-{backend}"
    assert whys["FC004"].startswith(f"{crate} defaults to `fusion` and `autotune`;"), whys
    assert whys["FC005"].startswith("burn-cubecl defaults to `autotune`,"), whys
    others = [f"`{other}`" for other in BACKENDS if other != backend]
    others += [f"burn-{other}" for other in BACKENDS if other != backend]
    for why in whys.values():
        assert not [word for word in others if word in why], why
    # JSON carries the whole why, worded the same.
    report = json.loads(run_in_process(str(project), *options, "--format", "json").stdout)
    for finding in report["findings"]:
        about = crate if finding["code"] == "FC004" else "burn-cubecl"
        assert finding["crate"] == about
        assert finding["why"].startswith(f"{about} defaults to ")
        assert "{crate}" not in finding["why"]
        assert not [word for word in others if word in finding["why"]], finding["why"]


def test_the_rule_page_names_every_backend() -> None:
    page = run_in_process("rule", "FC004").stdout
    assert "burn-wgpu, burn-cuda, burn-rocm or burn-cpu defaults to `fusion`" in page
    assert "{crate}" not in page
