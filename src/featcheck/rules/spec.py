"""A rule as data: which crates, which feature, when the crate counts as used, on which targets.

The form, where specs are written and what each key means: docs/writing-rules.md. `load` reads
a spec, `detect` evaluates it; a rule carries no code of its own.

Last, what a target provides, as far as rules care: the standard library and threads. Read from
the target's cfg values (`rustc --print cfg --target T`) where featcheck has them, else from the
triple. A rule about rayon or threading means nothing where there are no threads: on `wasm32-*`
without the `atomics` target feature (rayon then runs everything on the calling thread, or needs
a thread-pool shim and a nightly build) and on targets without `std` (`thumbv7em-none-eabihf`,
`*-none-*`), where rayon does not build at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from featcheck.semantics.cfg import TargetCfg
    from featcheck.severity import Severity


class Kind(Enum):
    """What about the feature is the finding."""

    MISSING = "missing"
    """The crate is built without it (the feature would make it faster)."""
    PRESENT = "present"
    """The crate is built with it (the feature costs speed when on)."""


@dataclass(frozen=True)
class CrateMatch:
    """One crate a rule looks at, optionally only some of its versions."""

    name: str
    versions: str | None = None
    """A cargo version requirement (`>=0.19.0-0`, `^1`, `>=1, <2`); None matches every version."""
    feature: str | None = None
    """The feature this crate (at these versions) must have; None: the rule's `feature`."""


@dataclass(frozen=True)
class SelectedBy:
    """The crate counts as used when a feature is resolved on one of the named crates above it
    (burn's `flex` on burn, burn-core, burn-tensor or burn-dispatch selects burn-flex)."""

    feature: str
    crates: tuple[str, ...]
    means: str = ""
    """Completes the evidence "the `flex` feature of burn 0.22.1 ...", e.g. `selects Flex`."""


@dataclass(frozen=True)
class HandledBy:
    """A crate above the flagged one that, with `feature`, does the work elsewhere: ndarray with
    `blas` sends f32/f64 matrix products to a BLAS library instead of matrixmultiply."""

    crate: str
    features: tuple[str, ...]
    """All of them (`feature` in the spec: one name, or a list)."""


@dataclass(frozen=True)
class ThirdParty:
    """How a finding counts when the crate reaches the member only through crates the user
    does not own (tract-onnx's or imageproc's choice, not the member's)."""

    severity: Severity
    """The severity then (the rule's own severity applies to the user's own use)."""
    own: tuple[str, ...] = ()
    """Crates whose direct use makes the flagged crate the user's own use."""


@dataclass(frozen=True)
class UsedWhen:
    """When a crate in the build counts as used; any one condition is enough (`used-when` in
    docs/writing-rules.md says why, and what each key means)."""

    built: bool = False
    """Being built is being used (crates that are optional wherever they appear)."""
    selected_by: SelectedBy | None = None
    direct: bool = False
    """A package the user owns (a path package) depends on the crate directly."""
    reachable: bool = False
    """A package the user owns reaches the crate by any path that avoids `avoiding`."""
    avoiding: tuple[str, ...] = ()
    """Crates whose own rules report the crate (gemm under burn-flex is FC001's business)."""
    handled_by: tuple[HandledBy, ...] = ()
    """Not used where every dependent (other than `avoiding`) is one of these with its feature."""
    unless_dependency_has: tuple[HandledBy, ...] = ()
    """Not used where the flagged crate's dependency `crate` is built with `feature` anyway."""
    unless_dependent: tuple[str, ...] = ()
    """Not used where one of these crates depends on the flagged one: its rule reports the loss."""
    unless_built_with: tuple[str, ...] = ()
    """Not used where the flagged crate has one of these features: it takes another path."""
    third_party: ThirdParty | None = None
    """None: the rule's severity wherever the crate comes from."""


@dataclass(frozen=True)
class TargetScope:
    """Where a rule means something: triple patterns and what the target must provide."""

    triples: tuple[str, ...] = ()
    """Shell-style patterns (`x86_64-*`, `aarch64-apple-darwin`); empty: every target."""
    needs: tuple[str, ...] = ()
    """Target capabilities the rule is about: `std`, `threads` (see `not_applicable`)."""
    unless_features: tuple[str, ...] = ()
    """Target features that, all enabled at compile time (`-C target-feature`, `target-cpu`),
    give the crate its fast path without the missing feature (memchr's AVX2 without `std`)."""


@dataclass(frozen=True)
class RuleDoc:
    """The documentation sections of a rule (`featcheck rule CODE`, docs/rules.md), each as
    the `[doc]` table of docs/writing-rules.md describes it."""

    what: str = ""
    why: str = ""
    example: str = ""
    fix: str = ""
    fix_example: str = ""
    fix_safety: str = ""
    ignore: str = ""
    references: tuple[str, ...] = ()

    @property
    def why_line(self) -> str:
        """The why-section on one line, as findings quote it."""
        return " ".join(self.why.split())


CRATE_PLACEHOLDER = "{crate}"
"""Stands in a rule's doc for the crate a finding is about (the why of a rule over several
crates words each finding for its own)."""


@dataclass(frozen=True)
class Rule:
    """One rule: a crate built without a feature, where the build uses the crate."""

    code: str
    name: str
    severity: Severity
    """Default severity for binaries; library-only members get INFO."""
    summary: str
    crates: tuple[CrateMatch, ...]
    feature: str
    """The feature whose absence is the finding (with `kind` PRESENT, whose presence is)."""
    consequence: str
    """Completes "X is built without `F`: ...", e.g. `every matmul runs on one core`."""
    kind: Kind = Kind.MISSING
    used_when: UsedWhen = field(default_factory=lambda: UsedWhen(reachable=True))
    targets: TargetScope = field(default_factory=TargetScope)
    requires: tuple[str, ...] = ()
    """Features the crate must already have for the rule to speak; "Requires" in
    docs/writing-rules.md says which rule then speaks first (stages/finish.py)."""
    companions: tuple[str, ...] = ()
    """Features the fix also adds where they are missing (FC001 adds `simd` with `rayon`)."""
    enabled_by_default: bool = True
    """Hints are opt-in (`--select`), so that a project with nothing wrong stays silent."""
    doc: RuleDoc = field(default_factory=RuleDoc)
    builtin: bool = True
    """False for rules a project defines in its configuration."""

    @property
    def why(self) -> str:
        """The doc's why-section on one line, for the rule's own page and SARIF's rule list:
        `{crate}` reads as every crate the rule names."""
        return self.worded(self.doc.why_line)

    def worded(self, text: str) -> str:
        """A section of the rule's doc, `{crate}` written as the crates it names: `burn-wgpu,
        burn-cuda or burn-cpu`."""
        names = self.crate_names()
        if not names:  # FC900's entry, which no spec makes, names no crate
            return text
        crates = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
        return text.replace(CRATE_PLACEHOLDER, crates)

    def crate_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.name for c in self.crates))


KeyPath = tuple[str | int, ...]


@dataclass
class SpecError(Exception):
    """A rule spec that is not valid, at `path` (relative to the rule's table)."""

    message: str
    path: KeyPath = ()
    at_key: bool = False
    """Point at the key rather than its value (unknown or missing keys)."""

    def __str__(self) -> str:
        return self.message


CAPABILITIES = ("std", "threads")
"""What `target-needs` may name."""


def lacks(capability: str, triple: str, cfg: TargetCfg | None) -> str | None:
    """Why the target lacks `capability` (one of CAPABILITIES), or None if it has it."""
    pairs = cfg.pairs if cfg is not None else frozenset()
    no_std = ("target_os", "none") in pairs or "-none" in triple
    if capability == "std":
        return "the target has no `std`" if no_std else None
    if no_std:  # capability is "threads"
        return "the target has no `std`, so no threads"
    wasm = triple.startswith(("wasm32", "wasm64")) or ("target_family", "wasm") in pairs
    # wasm threads need shared memory: the `atomics` target feature (`wasm32-wasip1-threads`
    # has it built in; stable rustc does not print that unstable feature, hence the triple).
    if not wasm or ("target_feature", "atomics") in pairs or "-threads" in triple:
        return None
    return "the target has no threads (wasm without the `atomics` target feature)"


def not_applicable(scope: TargetScope, triple: str | None, cfg: TargetCfg | None) -> str | None:
    """Why a rule with this scope does not apply to `triple`, or None when it does.

    An unknown target (saved tree text) gets every rule that is not about particular triples:
    featcheck cannot tell what it lacks.
    """
    if triple is None:
        return "the target is unknown" if scope.triples else None
    if scope.triples and not any(fnmatchcase(triple, p) for p in scope.triples):
        return "the rule applies only to " + ", ".join(scope.triples)
    reason = next(filter(None, (lacks(need, triple, cfg) for need in scope.needs)), None)
    enabled = cfg.pairs if cfg is not None else frozenset()
    unless = scope.unless_features
    if reason is None and unless and all(("target_feature", f) in enabled for f in unless):
        listed = ", ".join(f"`{f}`" for f in unless)
        return f"the target enables {listed} at compile time"
    return reason
