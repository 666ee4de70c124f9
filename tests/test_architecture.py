"""The tree is the architecture: layers, their order, and their public names.

The order of the layers is written once, in docs/architecture.md (the
fenced ``layers`` block, top layer first); this test reads it there, so
the docs and the check cannot disagree. It reads every module of
``src/convection`` with ``ast`` (nothing is imported) and fails on:

* an import cycle between modules, counting every import: at module
  level, under ``TYPE_CHECKING`` and inside functions (a deferred import
  that only dodges a cycle is still a cycle);
* an import of a package from a layer above, or from a peer on its line;
* an import from another package that goes past its ``__init__`` (other
  packages use only the names a package states in ``__all__``);
* a module at the root of the package, a top-level package that is in no
  layer, or a package ``__init__`` without a docstring and ``__all__``.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = SRC / "convection"
DOC = ROOT / "docs" / "architecture.md"


def layers(doc: str) -> list[list[str]]:
    """The layers, top first; peers share a line."""
    found = re.search(r"```layers\n(.*?)```", doc, re.S)
    assert found, "docs/architecture.md has no ```layers block"
    return [line.split() for line in found.group(1).splitlines() if line.strip()]


def rank(doc: str) -> dict[str, int]:
    """Package -> height (0 is the bottom layer)."""
    rows = layers(doc)
    return {pkg: len(rows) - 1 - i for i, row in enumerate(rows) for pkg in row}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the module (or package) it imports
    names: tuple[str, ...]  # names taken from ``target``; () for ``import x``
    line: int


def modules(src: Path = SRC) -> dict[str, Path]:
    """Module name -> its source; a package whose ``__init__.py`` loads its
    names lazily states them in ``__init__.pyi``, which is read instead."""
    found: dict[str, Path] = {}
    for path in sorted((src / "convection").rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
            stub = path.with_suffix(".pyi")
            path = stub if stub.exists() else path
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[Import]:
    """Every import of a convection module in ``path``, wherever it stands."""
    is_package = path.stem == "__init__"
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("convection"):
                    yield Import(name, alias.name, (), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            if not base.startswith("convection"):
                continue
            inside = name.startswith(base + ".")  # a package's own modules take modules
            stated = _stated(known[base]) if base in known and not inside else frozenset()
            subs = [a.name for a in node.names if _submodule(base, a.name, known, stated)]
            names = tuple(a.name for a in node.names if a.name not in subs)
            for sub in subs:  # ``from pkg import submodule``
                yield Import(name, f"{base}.{sub}", (), node.lineno)
            if names:
                yield Import(name, base, names, node.lineno)


def _stated(path: Path) -> frozenset[str]:
    """The names a package's ``__init__`` lists in ``__all__`` (read, not run)."""
    if path.stem != "__init__":
        return frozenset()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and target.id == "__all__":
                return frozenset(ast.literal_eval(node.value))
    return frozenset()


def _submodule(base: str, name: str, known: dict[str, Path], stated: frozenset[str]) -> bool:
    """Whether ``from base import name`` takes a module rather than a name
    the package states (``software.deploy`` is both: the function wins)."""
    return f"{base}.{name}" in known and name not in stated


def defining(target: str, known: dict[str, Path]) -> str:
    while target not in known:
        target = target.rpartition(".")[0]
    return target


def top(module: str) -> str:
    """The top-level package of ``module``; "" for the root's own modules
    (``convection``, ``convection.__main__``), which stand above every layer."""
    parts = module.split(".")
    if len(parts) < 2 or parts[1] == "__main__":
        return ""
    return parts[1]


def graph(known: dict[str, Path]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in known}
    for name, path in known.items():
        for imp in imports(name, path, known):
            target = defining(imp.target, known)
            if target != name:
                edges[name].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (or a module
    importing itself), each as a closed path through it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm; the tree is shallow
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(_path(sorted(component), edges))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def _path(component: list[str], edges: dict[str, set[str]]) -> list[str]:
    """A cycle through the component's first module, to name in a failure."""
    members, start = set(component), component[0]
    trail, seen = [start], {start}
    while True:
        nxt = sorted(w for w in edges[trail[-1]] if w in members)
        back = [w for w in nxt if w == start]
        if back and len(trail) > 1:
            return [*trail, start]
        fresh = [w for w in nxt if w not in seen]
        if not fresh:
            return [*trail, start]
        trail.append(fresh[0])
        seen.add(fresh[0])


def test_no_import_cycles() -> None:
    found = cycles(graph(modules()))
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def boundary_problems(known: dict[str, Path], doc: str) -> list[str]:
    ranks = rank(doc)
    problems = []
    for name, path in known.items():
        a = top(name)
        for imp in imports(name, path, known):
            b = top(defining(imp.target, known)) if imp.target != "convection" else ""
            where = f"{_shown(path)}:{imp.line}"
            if not a or not b or a == b:
                continue
            if ranks.get(b, -1) >= ranks.get(a, -1):
                relation = "a peer" if ranks.get(b) == ranks.get(a) else "a layer above"
                problems.append(f"{where}: {a} imports {b}, {relation}")
            if imp.target != f"convection.{b}":
                problems.append(f"{where}: {a} imports {imp.target}; use convection.{b}")
    return problems


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def test_layers_import_only_downward_through_package_roots() -> None:
    problems = boundary_problems(modules(), DOC.read_text())
    assert not problems, "\n".join(problems)


def test_every_top_level_package_has_one_layer() -> None:
    placed = [pkg for row in layers(DOC.read_text()) for pkg in row]
    assert len(placed) == len(set(placed)), "a package is in two layers"
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())
    assert sorted(placed) == packages


def test_the_root_holds_only_the_package_and_main() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert set(loose) <= {"__init__.py", "__main__.py"}, loose


PACKAGES = sorted(m for m, p in modules().items() if p.name == "__init__.py" and m.count(".") == 1)


@pytest.mark.parametrize("name", PACKAGES)
def test_each_package_states_its_public_names(name: str) -> None:
    path = modules()[name]
    init = path.with_suffix(".py")
    assert ast.get_docstring(ast.parse(init.read_text())), (
        f"{name}: no docstring saying what lives there"
    )
    package = importlib.import_module(name)
    public = getattr(package, "__all__", None)
    assert public is not None, f"{name} has no __all__"
    assert len(public) == len(set(public)), f"{name}.__all__ names a name twice"
    assert set(public) == _stated(path), f"{name}: __all__ and what {path.name} states differ"
    for attr in public:
        assert getattr(package, attr) is not None, f"{name}.{attr}"


def test_other_packages_use_only_stated_names() -> None:
    """``from convection.store import X`` names an X that store states."""
    known = modules()
    problems = []
    for name, path in known.items():
        for imp in imports(name, path, known):
            b = top(imp.target)
            if not b or b == top(name) or imp.target != f"convection.{b}":
                continue
            public = set(getattr(importlib.import_module(imp.target), "__all__", ()))
            problems += [
                f"{path.relative_to(ROOT)}:{imp.line}: {imp.target}.{n} is not in its __all__"
                for n in imp.names
                if n not in public
            ]
    assert not problems, "\n".join(problems)


# -- the checks themselves must be able to fail ---------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    for rel, text in files.items():
        path = tmp_path / "convection" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return modules(tmp_path)


def test_a_cycle_is_caught_even_when_deferred_or_type_only(tmp_path: Path) -> None:
    known = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "a/__init__.py": "",
            "a/x.py": "from convection.a import y\n",
            "a/y.py": "def f():\n    from convection.a.z import g\n",
            "a/z.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from convection.a.x import h\n",
        },
    )
    assert cycles(graph(known)) == [
        ["convection.a.x", "convection.a.y", "convection.a.z", "convection.a.x"]
    ]


def test_an_upward_or_deep_import_is_caught(tmp_path: Path) -> None:
    known = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "low/__init__.py": "from convection.low.m import k\n__all__ = ['k']\n",
            "low/m.py": "from convection.high import thing\nk = 1\n",
            "high/__init__.py": "thing = 1\n",
            "high/n.py": "from convection.low.m import k\n",
        },
    )
    doc = "```layers\nhigh\nlow\n```\n"
    problems = boundary_problems(known, doc)
    assert any("low imports high, a layer above" in p for p in problems)
    assert any("imports convection.low.m; use convection.low" in p for p in problems)
