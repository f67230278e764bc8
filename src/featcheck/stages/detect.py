"""The fourth stage: each member's rules over each of its builds, each detection kept once
per member and target (the first configuration that shows it; the others are listed)."""

from __future__ import annotations

from dataclasses import dataclass, field

from featcheck.graph import Node
from featcheck.matrix import ConfigurationPlan
from featcheck.noexec.gaps import Completeness
from featcheck.placement import Flagged
from featcheck.report import BuildGap, TargetSkip
from featcheck.rules import BuildView, Detection, Rule, detect, skipped_for_target
from featcheck.rules.detect import covering_rules
from featcheck.severity import Confidence
from featcheck.stages.members import Run, Scope
from featcheck.stages.resolve import Builds


@dataclass
class Detections:
    """What the rules found, before anything is located."""

    flagged: list[Flagged] = field(default_factory=list)
    skipped: list[TargetSkip] = field(default_factory=list)
    incomplete: list[BuildGap] = field(default_factory=list)
    """Builds whose verdict depends on packages a --no-exec audit could not read."""
    unread_note: str | None = None


def detect_all(run: Run, scope: Scope, plan: ConfigurationPlan, builds: Builds) -> Detections:
    """Every rule of each member over each of its builds."""
    # What packages --no-exec could not read may change, build by build (nothing otherwise).
    completeness = Completeness(scope.metadata, scope.resolver)
    found = Detections()
    skips = _SkipLog()
    first: dict[tuple[str, str, str, Node, str, tuple[str, ...]], Flagged] = {}
    for member in scope.members:
        for selection in plan.selections[member.id]:
            for target in scope.targets:
                run.deadline.check("running the rules over each build")
                parsed = builds[(member.id, target, selection)]
                cfg = run.source.target_cfg(target)
                view = BuildView(parsed.graph, (parsed.roots[0],), target=target, cfg=cfg)
                reach = completeness.reach(parsed.graph, member, target, scope.rules_of[member.id])
                if reach.gap is not None and reach.gap not in found.incomplete:
                    found.incomplete.append(reach.gap)
                for rule in scope.rules_of[member.id]:
                    detections = detect(rule, view, deferring=True)
                    reason = skipped_for_target(rule, view)
                    if reason is not None:
                        standing = [d for d in detections if not d.deferred_to]
                        skips.add(rule, target, reason, member.name, len(standing))
                        continue
                    for detection in detections:
                        if reach.hides(detection.node):
                            continue  # its manifest was not read: nothing is known of it
                        if detection.deferred_to and _covered_here(scope, view, detection):
                            continue
                        # A detection another configuration already flagged is placed once.
                        key = (
                            member.id,
                            target,
                            rule.code,
                            detection.node,
                            detection.feature,
                            detection.deferred_to,
                        )
                        if key in first:
                            first[key].also_in.append(selection)
                            continue
                        uncertain = reach.is_uncertain(detection.node)
                        confidence = Confidence.INCOMPLETE if uncertain else Confidence.RESOLVED
                        item = Flagged(
                            rule, detection, member, view, cfg, selection, confidence=confidence
                        )
                        first[key] = item
                        found.flagged.append(item)
    found.skipped = skips.entries()
    found.unread_note = completeness.unread_note()
    return found


def _covered_here(scope: Scope, view: BuildView, deferred: Detection) -> bool:
    """Whether a deferred detection stays unreported as it always was: no rule speaks first
    for it (its `requires` only limit where the rule applies), or one that would does not
    apply to this target (FC001 on a target without threads: FC003 says nothing of `simd` on
    wasm either). Any rule of the catalogue counts, run or not, so that ignoring FC001 does not
    make FC003 speak where FC001 never would."""
    covering = covering_rules(scope.config.catalogue.rules, deferred)
    return not covering or any(skipped_for_target(rule, view) is not None for rule in covering)


class _SkipLog:
    """Findings a rule would have made on targets it does not apply to, once per rule and
    target (several members share one line)."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], TargetSkip] = {}

    def add(self, rule: Rule, target: str, reason: str, member: str, findings: int) -> None:
        if findings == 0:
            return
        key = (rule.code, target)
        known = self._seen.get(key)
        members = (*known.members, member) if known else (member,)
        count = (known.findings if known else 0) + findings
        self._seen[key] = TargetSkip(rule.code, rule.name, target, reason, members, count)

    def entries(self) -> list[TargetSkip]:
        return [self._seen[key] for key in sorted(self._seen)]
