"""Where featcheck places a manifest cargo cannot read: at the line cargo names. A repeated key
was placed a line late (tomlkit notices it a line further on), on bat's manifest 50 for 49."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from featcheck.errors import FeatcheckError
from featcheck.manifest.document import parse_text

PACKAGE = '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n'
REPEATED = {
    "followed": '[dependencies]\nmemchr = { version = "2" }\nmemchr = "2"\nlibc = "0.2"\n',
    "last": '[dependencies]\nmemchr = { version = "2" }\nmemchr = "2"\n',
    "indented": '[dependencies]\nmemchr = "2"\n  memchr = "2"\n\n# more\nlibc = "0.2"\n',
    "dotted": '[dependencies]\nmemchr = "2"\nmemchr.version = "2"\nlibc = "0.2"\n',
}


@pytest.mark.cargo
@pytest.mark.parametrize("shape", sorted(REPEATED))
def test_a_repeated_key_is_placed_where_cargo_places_it(shape: str, tmp_path: Path) -> None:
    text = PACKAGE + REPEATED[shape]
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.rs").write_text("")
    (tmp_path / "Cargo.toml").write_text(text)
    cargo = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--offline", "--no-deps"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    said = re.search(r"--> Cargo\.toml:(\d+):(\d+)", cargo.stderr)
    assert cargo.returncode != 0 and said is not None, cargo.stderr
    with pytest.raises(FeatcheckError) as refused:
        parse_text(tmp_path / "Cargo.toml", text)
    assert (refused.value.line, refused.value.column) == (int(said[1]), int(said[2]))
    assert 'Key "memchr" already exists' in refused.value.message
