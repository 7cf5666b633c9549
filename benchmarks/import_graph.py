"""The olmes package's import graph, as a new maintainer reads it: its parts, their levels, what
crosses the layers contract, cycles, and where the lines are.

    python benchmarks/import_graph.py [PACKAGE_DIR] [--pyproject FILE] [--depth 1|2]

PACKAGE_DIR is the package folder (default ./olmes); --pyproject the file holding the
`[tool.importlinter]` contracts (default: PACKAGE_DIR/../pyproject.toml). It reads the source with
`ast` only (nothing is imported, so any checkout can be measured with any interpreter) and prints:

- the parts: the package's top-level subpackages and modules (with --depth 2 also the subpackages
  of those, e.g. olmes.store.oe_eval), each with its modules and lines;
- the parts' import graph and levels: a part that imports no other part is level 0, any other is
  one above the highest part it imports (parts on a cycle share a level): the longest import chain;
- imports against the `layers` contracts (a module importing a layer above its own, or a sibling
  of an independent `a | b` layer) and the `forbidden` contracts, each import named, split into
  module-level, function-level (lazy) and `if TYPE_CHECKING:` imports;
- cycles: strongly connected groups of parts, and of modules (module-level imports only, and all);
- the largest part by lines, and the 10 largest modules by lines.

Every import of the package counts, wherever it is (`import olmes.x`, `from olmes.x import y`,
`from . import y`, `from ..x import y`); `from olmes.x import y` names the module olmes.x.y when it
exists, else olmes.x.
"""

from __future__ import annotations

import argparse
import ast
import sys
import tomllib
from collections import defaultdict
from pathlib import Path


def module_name(package_dir: Path, path: Path) -> str:
    rel = path.relative_to(package_dir.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


class Import:
    def __init__(self, source: str, target: str, line: int, where: str):
        self.source, self.target, self.line, self.where = source, target, line, where


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(tree: ast.Module, module: str, is_package: bool, root: str, modules: set[str]) -> list[Import]:
    found: list[Import] = []

    def resolve(name: str) -> str | None:
        if name == root or name.startswith(root + "."):
            while name not in modules and "." in name:
                name = name.rsplit(".", 1)[0]
            return name if name in modules else None
        return None

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            here = where
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                here = "function" if where == "module" else where
            if isinstance(child, ast.If) and is_type_checking(child.test):
                for sub in child.body:
                    visit_one(sub, "type_checking")
                for sub in child.orelse:
                    visit_one(sub, where)
                continue
            visit_one(child, here)

    def visit_one(child: ast.AST, where: str) -> None:
        if isinstance(child, ast.Import):
            for alias in child.names:
                target = resolve(alias.name)
                if target:
                    found.append(Import(module, target, child.lineno, where))
        elif isinstance(child, ast.ImportFrom):
            if child.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (child.level - 1)] if child.level > 1 else base
                prefix = ".".join(base + ([child.module] if child.module else []))
            else:
                prefix = child.module or ""
            for alias in child.names:
                target = resolve(f"{prefix}.{alias.name}") if alias.name != "*" else None
                if not target or (target == prefix.rsplit(".", 1)[0] and prefix in modules):
                    target = resolve(prefix)
                if target:
                    found.append(Import(module, target, child.lineno, where))
        visit(child, where)

    visit(tree, "module")
    return found


def part_of(module: str, root: str, depth: int, packages: set[str]) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return root + " (its __init__)"
    for d in range(depth, 0, -1):
        candidate = ".".join(parts[: 1 + d])
        if len(parts) > d and candidate in packages:
            return candidate
    return ".".join(parts[:2])


def sccs(nodes: list[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[list[str]] = []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                result.append(sorted(group))
    return result


def levels_of(nodes: list[str], edges: dict[str, set[str]]) -> dict[str, int]:
    groups = sccs(nodes, edges)
    group_of = {member: i for i, group in enumerate(groups) for member in group}
    level: dict[int, int] = {}
    # Tarjan returns components in reverse topological order: dependencies first
    for i, group in enumerate(groups):
        deps = {group_of[t] for m in group for t in edges.get(m, ()) if group_of[t] != i}
        level[i] = 1 + max((level[d] for d in deps), default=-1)
    return {node: level[group_of[node]] for node in nodes}


def in_module(module: str, name: str) -> bool:
    return module == name or module.startswith(name + ".")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("package", nargs="?", default="olmes", type=Path)
    parser.add_argument("--pyproject", type=Path)
    parser.add_argument("--depth", type=int, default=1, choices=(1, 2))
    args = parser.parse_args(argv)
    package_dir = args.package.resolve()
    root = package_dir.name
    pyproject = args.pyproject or package_dir.parent / "pyproject.toml"

    files = sorted(package_dir.rglob("*.py"))
    modules = {module_name(package_dir, f): f for f in files}
    packages = {module_name(package_dir, f) for f in files if f.name == "__init__.py"}
    lines = {m: len(f.read_text(encoding="utf-8").splitlines()) for m, f in modules.items()}
    names = set(modules)
    imports: list[Import] = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        imports += imports_of(tree, module, path.name == "__init__.py", root, names)
    imports = [imp for imp in imports if imp.target != imp.source]

    part = {m: part_of(m, root, args.depth, packages) for m in modules}
    parts = sorted(set(part.values()))
    part_lines: dict[str, int] = defaultdict(int)
    part_modules: dict[str, int] = defaultdict(int)
    for m in modules:
        part_lines[part[m]] += lines[m]
        part_modules[part[m]] += 1

    print(f"package {package_dir} ({len(modules)} modules, {sum(lines.values())} lines, "
          f"{len(imports)} imports of its own modules)")  # fmt: skip
    print(f"\n== parts (depth {args.depth}): {len(parts)}")
    part_edges: dict[str, set[str]] = defaultdict(set)
    part_edge_count: dict[tuple[str, str], int] = defaultdict(int)
    for imp in imports:
        a, b = part[imp.source], part[imp.target]
        if a != b:
            part_edges[a].add(b)
            part_edge_count[(a, b)] += 1
    level = levels_of(parts, part_edges)
    n_levels = 1 + max(level.values(), default=-1)
    for p in sorted(parts, key=lambda p: (-level[p], p)):
        deps = ", ".join(
            f"{d.removeprefix(root + '.')} ({part_edge_count[(p, d)]})" for d in sorted(part_edges[p])
        )
        print(f"  level {level[p]}  {p:<28} {part_modules[p]:>3} modules {part_lines[p]:>6} lines"
              f"  imports: {deps or '-'}")  # fmt: skip
    print(f"levels: {n_levels} (longest import chain between parts: {n_levels} parts)")

    # -- contracts --
    print("\n== import contracts (pyproject.toml [tool.importlinter])")
    contracts = []
    if pyproject.is_file():
        contracts = (
            tomllib.loads(pyproject.read_text()).get("tool", {}).get("importlinter", {}).get("contracts", [])
        )
    if not contracts:
        print(f"  no contracts found in {pyproject}")
    total_upward = 0
    for contract in contracts:
        kind = contract.get("type")
        if kind == "layers":
            layers = [[name.strip() for name in layer.split("|")] for layer in contract["layers"]]
            independent = [len(layer) > 1 for layer in layers]

            def layer_of(module: str, layers=layers) -> tuple[int, str] | None:
                for i, layer in enumerate(layers):
                    for name in layer:
                        if in_module(module, name):
                            return i, name
                return None

            upward, sideways = [], []
            for imp in imports:
                la, lb = layer_of(imp.source), layer_of(imp.target)
                if la is None or lb is None:
                    continue
                if lb[0] < la[0]:
                    upward.append(imp)
                elif lb[0] == la[0] and la[1] != lb[1] and independent[la[0]]:
                    sideways.append(imp)
            outside = sorted(
                {p for p in parts if layer_of(p.split(" ")[0]) is None and p != root + " (its __init__)"}
            )
            total_upward += len(upward) + len(sideways)
            stack = " > ".join(" | ".join(layer) for layer in layers)
            print(f"  layers contract '{contract.get('name')}': {stack}")
            print(f"    upward imports: {len(upward)}; between independent siblings: {len(sideways)}")
            for imp in upward + sideways:
                print(f"      {imp.source}:{imp.line} -> {imp.target} ({imp.where})")
            if outside:
                print(f"    parts in no layer: {', '.join(outside)}")
        elif kind == "forbidden":
            sources = contract.get("source_modules", [])
            forbidden = contract.get("forbidden_modules", [])
            broken = [
                imp
                for imp in imports
                if any(in_module(imp.source, s) for s in sources)
                and any(in_module(imp.target, f) for f in forbidden)
            ]
            print(f"  forbidden contract '{contract.get('name')}': {len(broken)} import(s) break it")
            for imp in broken:
                print(f"      {imp.source}:{imp.line} -> {imp.target} ({imp.where})")
        else:
            print(f"  contract '{contract.get('name')}' of type {kind}: not checked here")
    print(f"upward imports against the layers contract(s): {total_upward}")

    # -- cycles --
    print("\n== cycles")
    part_cycles = [g for g in sccs(parts, part_edges) if len(g) > 1]
    print(f"  between parts: {len(part_cycles)}")
    for group in part_cycles:
        print(f"    {' <-> '.join(group)}")
    for label, kinds in (
        ("module-level imports", {"module"}),
        ("all imports", {"module", "function", "type_checking"}),
    ):
        edges: dict[str, set[str]] = defaultdict(set)
        for imp in imports:
            if imp.where in kinds and not in_module(imp.target, imp.source):  # a package's own modules
                edges[imp.source].add(imp.target)
        groups = [g for g in sccs(sorted(modules), edges) if len(g) > 1]
        print(f"  between modules ({label}; a package importing its own modules excluded): {len(groups)}")
        for group in groups:
            print(f"    {', '.join(group)}")

    where_counts: dict[str, int] = defaultdict(int)
    for imp in imports:
        where_counts[imp.where] += 1
    print(f"  imports by place: {dict(sorted(where_counts.items()))}")

    # -- sizes --
    largest = max(parts, key=lambda p: part_lines[p])
    share = 100 * part_lines[largest] / max(1, sum(lines.values()))
    print(f"\n== largest part by lines: {largest} ({part_lines[largest]} lines, "
          f"{part_modules[largest]} modules; {share:.0f}% of the package)")  # fmt: skip
    print("\n== the 10 largest modules by lines")
    for module in sorted(modules, key=lambda m: (-lines[m], m))[:10]:
        print(f"  {lines[module]:>5}  {modules[module].relative_to(package_dir.parent).as_posix()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
