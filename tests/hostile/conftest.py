"""The family of hostile checkouts and the world around it, built once per test module (each
xdist worker builds its own: the planted programs write to its own marker directory)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from actions_support import host_triple
from hostile_checks import keep_pristine
from hostile_family import clean, escapes, network, victim_files
from hostile_planted import plant_cache, planted
from hostile_run import Setting, seed_cache
from hostile_support import small_template
from hostile_world import FakeHost, make_world


@pytest.fixture(scope="module")
def setting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    if shutil.which("git") is None or shutil.which("cargo") is None:
        pytest.skip("git or cargo is not installed")
    host = FakeHost()
    host.start()
    try:
        base = tmp_path_factory.mktemp("hostile")
        world = make_world(base, host)
        small = small_template(base)
        template, registry = small.template, small.registry
        triple = host_triple()
        victim_files(world)
        family = {
            c.name: c for c in (clean(world, template), planted(world, template, registry, triple))
        }
        family.update({c.name: c for c in (escapes(world, template), network(world, template))})
        seed = seed_cache(template, registry, base)
        plant_cache(family["planted"].root, template, seed, world, triple)
        keep_pristine(base)
        runs = base / "runs"
        runs.mkdir()
        yield Setting(world, family, registry, seed, triple, runs)
    finally:
        host.stop()
