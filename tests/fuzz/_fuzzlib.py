"""What every harness shares: what a clean outcome is, the seed corpus, and
the entry point that hands a harness to atheris.

A harness is a module ``fuzz_<name>.py`` beside this one with two names:

* ``one_input(data: bytes) -> None``: one input through its surface. It
  returns on a clean outcome (success, or a :class:`ConvectionError` whose
  diagnostics are located and readable) and raises :class:`Unclean` or
  lets anything else out, which the fuzzer records as a crash.
* ``seeds() -> list[bytes]``: the seed corpus, built at run time from the
  fixtures and examples (nothing is committed as a copy).

``main(harness)`` runs one under atheris (libFuzzer's flags apply:
``-max_total_time=N``, ``-runs=N``, a corpus directory). Without a corpus
directory the seeds are written to a temporary one.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

import yaml

from convection.common import ConvectionError, Diagnostic, Diagnostics, InvalidInput, Limits

ROOT = Path(__file__).resolve().parents[2]
#: Where seeds come from: every YAML file of the fixtures and examples.
SEED_DIRS = (ROOT / "tests" / "fixtures", ROOT / "examples", ROOT / "tests" / "workflows" / "lang")

#: The expression harnesses' budgets: small, as the fuzzer runs thousands
#: of inputs a second.
LIMITS = Limits(
    yaql_limit_iterators=2000,
    yaql_memory_quota=200_000,
    yaql_timeout=0.5,
    max_value_size=256 * 1024,
)


class Unclean(AssertionError):
    """An outcome that is neither a success nor a clean, located error."""


class Harness(Protocol):
    __name__: str

    def one_input(self, data: bytes) -> None: ...

    def seeds(self) -> list[bytes]: ...


# --- clean outcomes ----------------------------------------------------------------


def check_diagnostic(d: Diagnostic, *, located: bool = True) -> None:
    """Readable (a message, printable as text and JSON) and, if asked, located
    (a file mark or a document path)."""
    if not isinstance(d.message, str) or not d.message.strip():
        raise Unclean(f"a diagnostic without a message: {d!r}")
    str(d)
    json.dumps(d.to_dict())
    if located and d.mark is None and not d.path:
        raise Unclean(f"a diagnostic with neither a mark nor a path: {d!r}")


def check_diagnostics(diags: Diagnostics | Iterable[Diagnostic], *, located: bool = True) -> None:
    for d in diags:
        check_diagnostic(d, located=located and d.is_error)


def check_error(exc: ConvectionError, *, located: bool = True) -> None:
    """A refusal the user can read: InvalidInput lists located diagnostics."""
    if isinstance(exc, InvalidInput):
        if not exc.diagnostics:
            raise Unclean(f"InvalidInput without diagnostics: {exc!r}")
        check_diagnostics(exc.diagnostics, located=located)
    if not str(exc).strip():
        raise Unclean(f"{type(exc).__name__} without a message")


def check_result(value: Any) -> None:
    """A value the engine would store or show: JSON-able (with str for the odd
    scalar, as the API renders it)."""
    json.dumps(value, default=str)


# --- seeds --------------------------------------------------------------------------


def yaml_files() -> list[Path]:
    found: set[Path] = set()
    for directory in SEED_DIRS:
        found.update(directory.rglob("*.yaml"))
        found.update(directory.rglob("*.yml"))
    return sorted(p for p in found if "dashboard" not in p.parts)


def _data(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text())
    except yaml.YAMLError:
        return None


def templates() -> list[Path]:
    return [p for p in yaml_files() if _is(p, "heat_template_version")]


def environments() -> list[Path]:
    sections = {"resource_registry", "parameters", "parameter_defaults", "event_sinks"}
    return [
        p
        for p in yaml_files()
        if isinstance(d := _data(p), dict)
        and d
        and set(d) <= sections | {"encrypted_param_names", "parameter_merge_strategies"}
    ]


def mistral_documents() -> list[Path]:
    return [p for p in yaml_files() if _is(p, "version") and not _is(p, "heat_template_version")]


def _is(path: Path, key: str) -> bool:
    data = _data(path)
    return isinstance(data, dict) and key in data


def strings(value: Any) -> Iterator[str]:
    """Every string in a YAML tree, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def all_strings() -> list[str]:
    out: list[str] = []
    for path in yaml_files():
        out.extend(strings(_data(path)))
    return out


# --- running under atheris ----------------------------------------------------------


def write_seeds(harness: Harness, directory: Path) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    seeds = harness.seeds()
    for i, seed in enumerate(seeds):
        (directory / f"seed-{i:04d}").write_bytes(seed)
    return len(seeds)


def warm_up(harness: Harness) -> None:
    """Each seed once, so every module the surface loads lazily is loaded
    (and then instrumented) before fuzzing starts."""
    for seed in harness.seeds():
        harness.one_input(seed)


def main(harness: Harness, argv: list[str] | None = None) -> None:
    import atheris

    args = list(sys.argv if argv is None else argv)
    if not any(not a.startswith("-") for a in args[1:]):
        tmp = Path(tempfile.mkdtemp(prefix=f"{harness.__name__}-corpus-"))
        write_seeds(harness, tmp)
        args.append(str(tmp))
    warm_up(harness)
    atheris.instrument_all()  # type: ignore[attr-defined]  # the stubs omit it
    one: Callable[[bytes], None] = harness.one_input
    atheris.Setup(args, one)
    atheris.Fuzz()


# --- expressions --------------------------------------------------------------------

#: The data expressions are fuzzed against; the input's first byte picks one.
CONTEXTS: tuple[dict[str, Any], ...] = (
    {},
    {"data": [3, 1, 2], "s": "abc", "m": {"a": 1, "b": [1, 2]}, "n": None, "t": True},
    {"xs": list(range(200)), "text": "x" * 1000, "nested": {"a": {"b": {"c": [1, {"d": 2}]}}}},
    {"__env": {"k": "v"}, "__execution": {"id": "e-1"}, "vars": {"x": 1}, "list": ["a", "b"]},
)


def expression_seeds() -> list[str]:
    """Every expression in the fixtures and examples: YAQL between ``<% %>``,
    Jinja between ``{{ }}`` or in ``{% %}`` blocks, a HOT yaql function's
    ``expression``; and some of each language's costly shapes."""
    import re

    found: dict[str, None] = {}
    yaql = re.compile(r"<%(.*?)%>", re.S)
    for text in all_strings():
        for inner in yaql.findall(text):
            found[inner.strip()] = None
        if "{{" in text or "{%" in text:
            found[text] = None
    for path in templates():
        for value in _yaql_expressions(_data(path)):
            found[value] = None
    return list(found)


def _yaql_expressions(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        body = value.get("yaql")
        if isinstance(body, dict) and isinstance(body.get("expression"), str):
            yield body["expression"]
        for item in value.values():
            yield from _yaql_expressions(item)
    elif isinstance(value, list):
        for item in value:
            yield from _yaql_expressions(item)


def check_within(started: float, now: float, timeout: float) -> None:
    """The wall-clock budget held: an evaluation ends within its deadline,
    give or take one builtin call and the machine's noise."""
    if now - started > timeout * 3 + 1.0:
        raise Unclean(f"the evaluation ran {now - started:.1f} s under a {timeout} s budget")
