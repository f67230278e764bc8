"""Build the probe for one backend configuration, once: prepared and verified in the cache
(cache.py), then compiled with compile.py's toolset and progress unless its binary is there.
What a build compiles and runs is said before it happens, for the consent to it.

Only registry crates (at the member's locked versions) and the probe crate itself are compiled;
cargo runs in the cache directory, so nothing of the audited checkout is read but its lockfile.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from featcheck.cargo.argv_gate import TARGET, Argument, GateError, option, word
from featcheck.cargo.process import start_process
from featcheck.errors import FeatcheckError
from featcheck.graph import DependencyGraph
from featcheck.probe.cache import (
    PACKAGE,
    binary_name,
    cache_key,
    cache_root,
    executable,
    render_manifest,
    write_if_changed,
)
from featcheck.probe.compile import BuildProgress, classify_build_failure, find_toolset
from featcheck.probe.measure import usable_cores
from featcheck.probe.programs import Program
from featcheck.probe.resolve import BackendConfig, read_tree
from featcheck.severity import plural

if TYPE_CHECKING:
    from featcheck.cargo.runner import CargoRunner

_PLAIN = re.compile(r"[A-Za-z0-9_.+-]{1,200}")


@dataclass(frozen=True)
class BuildPlan:
    """One configuration, prepared in the cache: what its build would compile and run, and once
    built (`ProbeBuilder.build`) what the build took."""

    config: BackendConfig
    directory: Path
    key: str
    cached: bool
    """Its binary exists: nothing is compiled."""
    crates: tuple[str, ...] = ()
    """Every crate the build compiles, "name version", except the probe crate itself."""
    build_scripts: tuple[str, ...] | None = ()
    """Those of them whose build script cargo compiles and runs (None: cargo could not say)."""
    proc_macros: tuple[str, ...] = ()
    seconds: float = 0.0
    """Seconds spent preparing it, and once built compiling it (~0 when cached), less `waited`;
    a build adds its compile, not the time since planning."""
    waited: float = 0.0
    """Seconds its build waited for another build's lock in the shared cache."""

    @property
    def binary(self) -> Path:
        return self.directory / executable(binary_name(self.key))


def crate_label(name: object, version: object) -> str:
    """Each part as cargo allows it, else quoted (never raw control bytes)."""
    return " ".join(
        text if _PLAIN.fullmatch(text) else ascii(text) for text in (str(name), str(version))
    )


def _target(flag: str, target: str) -> Argument:
    """`--flag=TRIPLE` for the host triple rustc reported, through the gate all the same."""
    try:
        return option(flag, target, TARGET)
    except GateError as error:
        raise FeatcheckError(f"target: {error}") from None


class ProbeBuilder:
    def __init__(
        self,
        runner: CargoRunner,
        *,
        offline: bool,
        timeout: float,
        say: Callable[[str], None],
        on_command: Callable[[list[str]], None] | None = None,
        root: Path | None = None,
    ) -> None:
        self.trust = runner.trust
        self.root = root if root is not None else cache_root(self.trust)
        self.target_dir = self.root / "target"
        self.offline = offline
        self.timeout = timeout
        self.say = say
        self.on_command = on_command
        self.toolset = find_toolset(runner, self.target_dir, timeout)

    def _cargo(
        self,
        directory: Path,
        args: list[Argument],
        on_stderr: Callable[[bytes], None] | None = None,
    ) -> str:
        """Through the audit's process runner (gated arguments, --timeout, the whole process
        group killed on expiry); `on_stderr` sees its stderr as it comes."""
        arguments = [*args, word("--offline")] if self.offline else args
        if self.on_command is not None:
            self.on_command(["cargo", *arguments])
        output = start_process(
            self.toolset.cargo,
            arguments,
            trust=self.trust,
            cwd=directory,
            env=self.toolset.environment,
            timeout=self.timeout,
            what=f"`cargo {args[0]}` for the probe",
            on_stderr=on_stderr,
        ).wait()
        if on_stderr is not None and os.name != "posix":  # all at once there (process.py)
            on_stderr(output.stderr.encode())
        if output.returncode != 0:
            tail = "".join(output.stderr.splitlines(keepends=True)[-200:])
            raise FeatcheckError(classify_build_failure(tail, offline=self.offline))
        return output.stdout

    def _tree(self, directory: Path, edges: str, prefix: str, *more: Argument) -> DependencyGraph:
        """Its arguments are featcheck's own constants."""
        text = self._cargo(
            directory,
            [
                word("tree"),
                Argument(f"--edges={edges}"),
                Argument("--format={p} [{f}]"),
                Argument(f"--prefix={prefix}"),
                Argument("--charset=ascii"),
                *more,
            ],
        )
        return read_tree(text, "the probe's cargo tree")

    def prepare(self, config: BackendConfig, program: Program) -> tuple[Path, str]:
        key = cache_key(config, program, self.toolset)
        directory = self.root / key
        for name, content in program.sources().items():
            (directory / name).parent.mkdir(parents=True, exist_ok=True)
            write_if_changed(directory / name, content)
        manifest = render_manifest(config, program, binary_name(key))
        write_if_changed(directory / "Cargo.toml", manifest.encode())
        if config.lockfile is not None and not (directory / "Cargo.lock").exists():
            write_if_changed(directory / "Cargo.lock", config.lockfile)
        return directory, key

    def verify(self, directory: Path, config: BackendConfig) -> None:
        """cargo tree must show the member's exact features on every pinned crate."""
        graph = self._tree(directory, "normal", "depth")
        for pin in config.pins:
            nodes = [n for n in graph.named(pin.name) if n.version == pin.version and not n.host]
            got = sorted({f for n in nodes for f in n.features})
            if len(nodes) != 1 or got != sorted(pin.features):
                found = ", ".join(f"{n.version} [{','.join(sorted(n.features))}]" for n in nodes)
                raise FeatcheckError(
                    f"cannot reproduce {config.member}'s build: it builds {pin}, the probe would "
                    f"build {pin.name} {found or 'not at all'}; refusing to time something else"
                )

    def plan(self, config: BackendConfig, program: Program) -> BuildPlan:
        started = time.monotonic()
        directory, key = self.prepare(config, program)
        binary = directory / executable(binary_name(key))
        if binary.is_file() and (directory / "built.json").is_file():
            return BuildPlan(config, directory, key, True, seconds=time.monotonic() - started)
        self.say(
            f"checking that the probe reproduces {config.member}'s {config.backend} (cargo tree)"
        )
        self.verify(directory, config)
        graph = self._tree(directory, "normal,build", "none", _target("--target", config.target))
        nodes = [n for n in graph.nodes() if n.name != PACKAGE]
        crates = {crate_label(n.name, n.version) for n in nodes}
        return BuildPlan(
            config,
            directory,
            key,
            False,
            tuple(sorted(crates)),
            self._build_scripts(directory, config, crates),
            tuple(sorted(crate_label(n.name, n.version) for n in nodes if n.proc_macro)),
            time.monotonic() - started,
        )

    def _build_scripts(
        self, directory: Path, config: BackendConfig, crates: set[str]
    ) -> tuple[str, ...] | None:
        """Which of `crates` have a build script (cargo tree cannot say; cargo metadata can,
        but may need manifests the registry cache lacks under --offline: then None)."""
        try:
            platform = _target("--filter-platform", config.target)
            arguments = [word("metadata"), Argument("--format-version=1"), platform]
            metadata = json.loads(self._cargo(directory, arguments))
        except (FeatcheckError, ValueError):
            return None
        packages = metadata.get("packages", []) if isinstance(metadata, dict) else []
        found = {
            crate_label(package.get("name"), package.get("version"))
            for package in packages
            if isinstance(package, dict)
            and "custom-build" in {k for t in package.get("targets", []) for k in t.get("kind", [])}
        }
        return tuple(sorted(found & crates))

    def build(self, plan: BuildPlan) -> BuildPlan:
        started = time.monotonic()
        directory, key, config, binary = plan.directory, plan.key, plan.config, plan.binary
        if plan.cached:
            # Said, so that no build passes unnoticed.
            self.say(
                f"using the probe built before for {config.backend}: nothing is compiled "
                f"({binary.parent})"
            )
            return replace(plan, seconds=plan.seconds + time.monotonic() - started)
        total = len(plan.crates) + 1
        self.say(
            f"building the probe for {config.backend} ({plural(total, 'crate')}, release profile; "
            f"the first build takes minutes, later probes reuse it: {directory})"
        )
        progress = BuildProgress(total)
        try:
            arguments = [word("build"), word("--release"), Argument(f"--bin={binary_name(key)}")]
            self._cargo(directory, arguments, progress.feed)
        except BaseException:
            progress.clear()
            raise
        progress.done()
        waited = progress.waited
        built = self.target_dir / "release" / binary.name
        if not built.is_file():
            raise FeatcheckError(f"cargo reported success but {built.name} was not built")
        partial = binary.with_name(binary.name + ".partial")
        shutil.copy2(built, partial)
        os.replace(partial, binary)
        # Another probe's build in the same cache is its time, not this one's.
        seconds = plan.seconds + time.monotonic() - started - waited
        (directory / "built.json").write_text(
            json.dumps({"key": key, "seconds": round(seconds, 1), "waited": round(waited, 1)})
            + "\n"
        )
        return replace(plan, seconds=seconds, waited=waited)


# --- the statement before building, for the consent to it ---------------------------------------


CPU_SECONDS_PER_CRATE = 1.4
"""CPU time one crate of the probe's graph takes to compile in release, on average, with the
matmul's cold and thin crates unoptimised (`Program.cold`, `Program.thin`). Measured on first
builds of the burn-flex probe (124 crates and the program) on the shared 2-core build machine:
171 CPU-seconds, 97 s to the verdict at a load of 1.1 (this model: 136 s)."""


def _listed(title: str, names: list[str]) -> list[str]:
    if not names:
        return [f"  {title}: none"]
    return [f"  {title} ({len(names)}):", *(f"    {name}" for name in names)]


def build_statement(
    plans: list[BuildPlan],
    member: str,
    versions: str,
    *,
    cores: int | None = None,
    load: float | None = None,
) -> str:
    """Read at a prompt, so short lines; `versions`: whose versions (`the checkout's Cargo.lock
    pins`)."""
    crates = sorted({c for plan in plans for c in plan.crates})
    macros = sorted({c for plan in plans for c in plan.proc_macros})
    known = [plan.build_scripts for plan in plans if plan.build_scripts is not None]
    # Cargo runs one job per core, and the runnable work already there (`load`) takes its
    # share of the cores.
    count, cores = len(crates) + len(plans), max(cores or usable_cores(), 1)
    share = cores * cores / (cores + max(load or 0.0, 0.0))
    seconds = count * CPU_SECONDS_PER_CRATE / share
    if seconds < 90:
        duration = f"{max(10, round(seconds, -1)):.0f} s"
    else:
        duration = f"{round(seconds / 60):.0f} minutes"
    busy = "no load average" if load is None else f"load {load:.1f} from other work"
    if len(plans) == 1:
        lines = [f"building the probe for {plans[0].config.backend}"]
    else:
        lines = [f"building {len(plans)} probes, for", *(f"    {p.config.backend}" for p in plans)]
    lines += [
        f"  compiles {plural(len(crates), 'crate')} from the registry, at the versions",
        f"  {versions}, and featcheck's own probe",
        "  crate, then runs the probe.",
        f"  first build: about {duration} here, an estimate",
        f"  ({plural(count, 'crate')}, {plural(cores, 'core')}, {busy});",
        "  crates an earlier probe built are reused",
    ]
    if len(known) == len(plans):
        scripts = sorted({c for listed in known for c in listed})
        lines += _listed("build scripts cargo runs while compiling", scripts)
    else:
        lines.append("  build scripts: cargo metadata could not list which run here")
    lines += _listed("proc-macros rustc loads while compiling", macros)
    lines += [
        f"  nothing of {member}'s own code (its crate, build script",
        "  or path dependencies) is compiled or run",
    ]
    return "\n".join(lines)
