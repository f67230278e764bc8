"""A project's own rules: the `[[rule]]` entries of its workspace configuration."""

from __future__ import annotations

from featcheck.manifest.document import ManifestDocument
from featcheck.policy.sections import SectionReader
from featcheck.rules import Catalogue, Rule
from featcheck.rules.load import parse_rule
from featcheck.rules.spec_values import SpecError
from featcheck.rules.unused_suppression import UNUSED_SUPPRESSION_CODE, UNUSED_SUPPRESSION_NAME


def with_user_rules(
    doc: ManifestDocument, prefix: tuple[str, ...], catalogue: Catalogue
) -> Catalogue:
    """`catalogue` plus the `[[rule]]` entries of the section at `prefix` of `doc`, each checked
    strictly."""
    table = doc.get(*prefix) if prefix else doc.data
    if not isinstance(table, dict) or "rule" not in table:
        return catalogue
    reader = SectionReader(doc, prefix, None, catalogue)
    path = (*prefix, "rule")
    entries = table["rule"]
    if not isinstance(entries, list):
        raise reader.error("`rule` must be an array of tables ([[rule]] entries)", path)
    rules: list[Rule] = []
    for index, entry in enumerate(entries):
        try:
            rule = parse_rule(entry, builtin=False)
        except SpecError as error:
            raise reader.error(
                error.message, (*path, index, *error.path), at_key=error.at_key
            ) from None
        for key, value in (("code", rule.code), ("name", rule.name)):
            taken_by = _taken_by(value, catalogue, rules)
            if taken_by is not None:
                message = f"rule {key} `{value}` is taken by {taken_by}"
                raise reader.error(message, (*path, index, key))
        rules.append(rule)
    return catalogue.with_user_rules(rules)


def _taken_by(value: str, catalogue: Catalogue, rules: list[Rule]) -> str | None:
    """The rule (or FC900) that already has `value` as its code or name, or None."""
    clash = catalogue.find(value) or next((r for r in rules if value in (r.code, r.name)), None)
    if clash is not None:
        return f"{clash.code} `{clash.name}`"
    if value.lower() in (UNUSED_SUPPRESSION_CODE.lower(), UNUSED_SUPPRESSION_NAME):
        return UNUSED_SUPPRESSION_CODE
    return None
