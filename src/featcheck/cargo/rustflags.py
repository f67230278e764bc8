"""The rustflags featcheck lets reach rustc: those that change which cfg values it reports.

Flags come from the checkout's configuration and from the environment (CI often exports them
from checkout content); cargo passes them to the `rustc` it runs for its target probe, where
`-Zcodegen-backend=LIB` would load a library. Only the flags that change cfg values pass.
"""

from __future__ import annotations

from collections.abc import Mapping

from featcheck.cargo.argv_gate import (
    CFG,
    PANIC,
    SWITCH,
    TARGET_CPU,
    TARGET_FEATURES,
    Argument,
    GateError,
    Grammar,
    option,
    word,
)
from featcheck.errors import FeatcheckError

KEPT_CODEGEN: dict[str, Grammar] = {
    "target-feature": TARGET_FEATURES,
    "target-cpu": TARGET_CPU,
    "panic": PANIC,
    "debug-assertions": SWITCH,
}
"""The `-C` options that change what `rustc --print cfg` prints (`target_feature`, `panic`,
`debug_assertions`), with the grammar of their values."""

# rustc options that take their value as the next argument (`-L DIR`, `--extern X=Y`, ...):
# that argument is the option's value, not an option of its own.
_TAKES_VALUE = {
    "--cfg", "--check-cfg", "-C", "--codegen", "-Z", "-L", "-l", "--crate-type", "--crate-name",
    "--edition", "--emit", "--print", "-o", "--out-dir", "--explain", "--target", "-A", "-W",
    "--force-warn", "-D", "-F", "--cap-lints", "--extern", "--sysroot", "--error-format",
    "--json", "--color", "--diagnostic-width", "--remap-path-prefix", "--env-set",
}  # fmt: skip


class RustflagError(Exception):
    """A rustflag that featcheck must not pass and cannot ignore."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index
        self.message = message


def filter_rustflags(flags: list[str]) -> list[Argument]:
    """The flags that change which cfg values rustc reports, each as one `--flag=value`.

    Kept: `--cfg NAME` / `--cfg NAME="VALUE"` as `--cfg=...`, and `-C` target-feature,
    target-cpu, panic and debug-assertions as `-CKEY=VALUE`. Everything else is dropped: `-Z`
    flags load code (`-Zcodegen-backend`, `-Zllvm-plugins`), `-L`/`--sysroot`/`--extern` point
    rustc at files, `--print` writes them, and none of them changes features.

    Raises RustflagError (with the flag's index) for a kept flag whose value does not match
    its grammar, and for an argument file (`@FILE`) anywhere: rustc would read more flags from
    that file, which featcheck neither passes on nor can ignore (they may set cfg values).
    """
    kept: list[Argument] = []
    index = 0
    while index < len(flags):
        position = index
        flag = flags[index]
        index += 1
        if flag.startswith("@"):
            raise RustflagError(
                position,
                f"`{flag[:60]}` is a rustc argument file: featcheck does not pass it on (it may "
                "hold any rustc option) and cannot audit without the cfg values it may set",
            )
        value: str | None = None
        if flag in _TAKES_VALUE:  # `--cfg X`, `-C key=value`, `-L DIR`
            if index >= len(flags):
                break
            name, value = flag, flags[index]
            index += 1
            if value.startswith("@"):
                raise RustflagError(
                    position + 1, f"`{value[:60]}` is a rustc argument file (after `{flag}`)"
                )
        elif flag.startswith("--") and "=" in flag:  # `--cfg=X`, `--codegen=key=value`
            name, value = flag.split("=", 1)
        elif flag.startswith("-C") and len(flag) > 2:  # `-Ckey=value`
            name, value = "-C", flag[2:]
        else:
            continue
        try:
            if name == "--cfg":
                kept.append(option("--cfg", value, CFG))
            elif name in ("-C", "--codegen"):
                key, equals, setting = value.partition("=")
                if key not in KEPT_CODEGEN:
                    continue
                if equals:
                    kept.append(option(f"-C{key}", setting, KEPT_CODEGEN[key]))
                elif key == "debug-assertions":  # `-C debug-assertions` alone means yes
                    kept.append(word(f"-C{key}"))
                else:
                    raise GateError(f"`-C {key}` needs a value")
        except GateError as error:
            raise RustflagError(position, f"`{name}` in rustflags: {error}") from None
    return kept


# A rustflags list whose flags featcheck drops all (`-C link-arg=...`) still replaces `[build]`'s
# for its target in cargo, where an empty list would not: cargo gets this flag in its place,
# which changes no cfg value (featcheck's cargo never compiles).
NEUTRAL_FLAGS = ["-Ccodegen-units=1"]


def environment_list(environment: Mapping[str, str], name: str) -> list[Argument] | None:
    """The kept flags of a rustflags list set through the environment (split at whitespace,
    as cargo splits it); None when unset or empty."""
    flags = environment.get(name, "").split()
    if not flags:
        return None
    try:
        return filter_rustflags(flags)
    except RustflagError as error:
        raise FeatcheckError(f"{name}: {error.message}") from None


def environment_rustflags(environment: Mapping[str, str]) -> list[Argument] | None:
    """The kept flags of CARGO_ENCODED_RUSTFLAGS or RUSTFLAGS, which replace every configured
    rustflag in cargo; None when neither is set."""
    encoded = environment.get("CARGO_ENCODED_RUSTFLAGS")
    if encoded is not None:
        flags, name = (encoded.split("\x1f") if encoded else []), "CARGO_ENCODED_RUSTFLAGS"
    elif "RUSTFLAGS" in environment:
        flags, name = environment["RUSTFLAGS"].split(), "RUSTFLAGS"
    else:
        return None
    try:
        return filter_rustflags(flags)
    except RustflagError as error:
        raise FeatcheckError(f"{name}: {error.message}") from None


def filter_environment_rustflags(environment: dict[str, str]) -> None:
    """Put the environment's rustflags through the same allow-list as the configuration's, in
    place: CI often exports them from checkout content, and cargo passes them to the `rustc`
    it runs for its target probe (`-Zcodegen-backend=LIB` loads a library). Each variable keeps
    its meaning: RUSTFLAGS and CARGO_ENCODED_RUSTFLAGS still replace every configured flag, a
    `CARGO_TARGET_<TRIPLE>_RUSTFLAGS` whose flags are all dropped still replaces `[build]`'s.
    Raises FeatcheckError for an argument file or a kept flag of the wrong form."""
    if (encoded := environment_rustflags(environment)) is not None:
        environment.pop("RUSTFLAGS", None)
        environment["CARGO_ENCODED_RUSTFLAGS"] = "\x1f".join(encoded)
    for name in [n for n in environment if n.startswith("CARGO_") and n.endswith("_RUSTFLAGS")]:
        if name == "CARGO_ENCODED_RUSTFLAGS":
            continue
        kept = environment_list(environment, name)
        if name == "CARGO_BUILD_RUSTFLAGS" or not name.startswith("CARGO_TARGET_"):
            if kept:
                environment[name] = " ".join(kept)
            else:
                environment.pop(name)  # cargo adds it to the files' flags: nothing to add
        elif kept is not None:
            environment[name] = " ".join(kept or NEUTRAL_FLAGS)
