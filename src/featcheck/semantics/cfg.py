"""Decide whether a `[target.X]` dependency table applies to the target being audited.

cargo evaluates `cfg(...)` expressions against the values `rustc --print cfg --target T` prints;
featcheck does the same so that it can tell which of several declarations a build uses.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_TOKEN = re.compile(
    r'\s*(?:(?P<ident>[A-Za-z_][A-Za-z0-9_]*)|(?P<string>"(?:[^"\\]|\\.)*")|(?P<punct>[(),=]))'
)


# A NamedTuple, not a dataclass: the runner that asks rustc for it loads before cargo starts.
class TargetCfg(NamedTuple):
    """The cfg values of one target, as printed by `rustc --print cfg`."""

    triple: str
    names: frozenset[str]
    """Bare cfg names such as `unix` or `debug_assertions`."""
    pairs: frozenset[tuple[str, str]]
    """`key="value"` settings such as ("target_os", "linux")."""

    @classmethod
    def parse(cls, triple: str, text: str) -> TargetCfg:
        names: set[str] = set()
        pairs: set[tuple[str, str]] = set()
        for line in text.splitlines():
            line = line.strip()
            if "=" in line:
                key, _, value = line.partition("=")
                pairs.add((key.strip(), value.strip().strip('"')))
            elif line:
                names.add(line)
        return cls(triple, frozenset(names), frozenset(pairs))

    def applies(self, platform: str | None) -> bool:
        """True when a dependency declared for `platform` (None: every platform) is used."""
        if platform is None:
            return True
        platform = platform.strip()
        if not platform.startswith("cfg("):
            return platform == self.triple
        return _Evaluator(platform[len("cfg") :], self).evaluate()


class _Evaluator:
    """A reader of `(predicate)` where predicate is all/any/not/name/pair, with a stack of its
    own instead of recursion: cargo takes `not(not(...))` 10,000 deep (cargo 1.95; it
    overflows its stack somewhere past that), and no nesting a checkout writes may reach
    Python's recursion limit."""

    def __init__(self, text: str, cfg: TargetCfg) -> None:
        self.tokens: list[str] = []
        self.position = 0
        self.cfg = cfg
        index = 0
        while index < len(text):
            match = _TOKEN.match(text, index)
            if match is None:
                if text[index:].strip():
                    raise ValueError(f"cannot read cfg expression {text!r}")
                break
            self.tokens.append(match.group(match.lastgroup or 0))
            index = match.end()

    def _next(self) -> str:
        if self.position >= len(self.tokens):
            raise ValueError("cfg expression ends too early")
        token = self.tokens[self.position]
        self.position += 1
        return token

    def _expect(self, token: str) -> None:
        if self._next() != token:
            raise ValueError(f"expected {token!r} in cfg expression")

    def evaluate(self) -> bool:
        self._expect("(")
        value = self._predicate()
        self._expect(")")
        return value

    def _predicate(self) -> bool:
        """One predicate: each `all(`, `any(` or `not(` opens a frame (its operator and the
        values read so far), closed by its `)`."""
        frames: list[tuple[str, list[bool]]] = []
        while True:
            name = self._next()
            value: bool | None
            if name in ("all", "any", "not") and self._peek() == "(":
                self._expect("(")
                frames.append((name, []))
                value = None
            elif self._peek() == "=":  # a pair: `target_os = "linux"`
                self._next()
                value = (name, self._next().strip('"')) in self.cfg.pairs
            else:  # a name: `unix`
                value = name in self.cfg.names
            while True:
                if value is not None:
                    if not frames:
                        return value
                    frames[-1][1].append(value)
                    if self._peek() == ",":
                        self._next()
                if self._peek() != ")":
                    break  # the open frame's next predicate
                self._expect(")")
                operator, values = frames.pop()
                if operator != "not":
                    value = (all if operator == "all" else any)(values)
                elif len(values) != 1:
                    raise ValueError("not(...) takes exactly one predicate")
                else:
                    value = not values[0]

    def _peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None
