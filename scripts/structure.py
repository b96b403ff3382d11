"""Print the package's structure: module sizes, imports between folders, and import cycles.

Used for the restructure's before/after figures and by CONTRIBUTING.md:

    python scripts/structure.py            # sizes, folder graph, cycles
    python scripts/structure.py --sizes    # only the module-size table

Built on grimp, the import graph library under import-linter.
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path

import grimp

PACKAGE = "picobot_tui"


_REPO_OF: tuple[str, str] = ("", "")


def _file(module: str) -> Path | None:
    """The module's file in the installed-layout copy."""
    base = Path(_REPO_OF[0], *module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.exists():
            return path
    return None


def _group(module: str) -> str:
    """The folder a module lives in: picobot_tui.core.tools.web_fetch -> core/tools."""
    parts = module.split(".")[1:]
    if not parts:
        return "(top)"
    path = _file(module)
    if path is not None and path.name == "__init__.py":
        return "/".join(parts)
    return "/".join(parts[:-1]) or "(top)"


def sizes(graph: grimp.ImportGraph) -> None:
    rows = []
    for module in sorted(graph.modules):
        path = _file(module)
        if path is None or not path.exists():
            continue
        rows.append((len(path.read_text().splitlines()), module))
    rows.sort(reverse=True)
    print("## Module sizes (lines)\n")
    per_group: Counter[str] = Counter()
    count: Counter[str] = Counter()
    for lines, module in rows:
        per_group[_group(module)] += lines
        count[_group(module)] += 1
    print("| folder | modules | lines | largest |")
    print("|---|---:|---:|---|")
    for group in sorted(per_group):
        largest = max((r for r in rows if _group(r[1]) == group), key=lambda r: r[0])
        print(
            f"| {group} | {count[group]} | {per_group[group]} | "
            f"{largest[1].rsplit('.', 1)[-1]} ({largest[0]}) |"
        )
    over = [r for r in rows if r[0] > 500]
    print(f"\nModules over 500 lines: {', '.join(f'{m} ({n})' for n, m in over) or 'none'}")
    print(f"Modules: {len(rows)}; median {sorted(r[0] for r in rows)[len(rows) // 2]} lines\n")


def folder_graph(graph: grimp.ImportGraph) -> None:
    edges: Counter[tuple[str, str]] = Counter()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            a, b = _group(module), _group(imported)
            if a != b:
                edges[(a, b)] += 1
    print("## Imports between folders (importer -> imported: module pairs)\n")
    for (a, b), n in sorted(edges.items()):
        print(f"  {a:24} -> {b:24} {n}")
    print()


def cycles(graph: grimp.ImportGraph) -> int:
    """Pairs of modules that import each other, directly or through a chain; returns how
    many."""
    found: set[tuple[str, str]] = set()
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            if graph.chain_exists(imported, module):
                found.add((min(module, imported), max(module, imported)))
    print("## Import cycles (module pairs on a cycle, including imports inside functions)\n")
    for a, b in sorted(found):
        print(f"  {a} <-> {b}")
    print(f"\n{len(found)} pairs\n")
    return len(found)


def main() -> None:
    # grimp does not follow setuptools' package-dir mapping of widgets/ and styles/: read a
    # copy laid out as installed (the same one scripts/check_structure.py checks).
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from check_structure import ROOT, _installed_copy

    with tempfile.TemporaryDirectory(prefix="picobot-structure-") as tmp:
        _installed_copy(Path(tmp))
        sys.path.insert(0, tmp)
        graph = grimp.build_graph(PACKAGE, include_external_packages=False)
        global _REPO_OF
        _REPO_OF = (tmp, str(ROOT))
        if "--cycles" in sys.argv:  # the check tests/test_checked_contracts.py runs
            sys.exit(1 if cycles(graph) else 0)
        sizes(graph)
        if "--sizes" in sys.argv:
            return
        folder_graph(graph)
        cycles(graph)


if __name__ == "__main__":
    main()
