"""The architecture, checked: each package imports only from its own layer or those below it, and
no module imports itself back through others. Imports inside functions count too: a lazy import
upwards is the same dependency, only hidden. The benchmark harness, `benchmarks/` beside the
package, sits above all of it: the installed package never imports it."""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("autotune", "benchmarks")

# Low to high. A package (or top-level module) may import from its own layer and lower ones.
LAYERS = (
    (
        "errors",
        "slurm_env",
        "strenum",
        "run_paths",
        "key_values",
        "version",
        "made_by",
        "lazy",
        "wording",
    ),
    ("space", "telemetry"),
    ("decision",),
    ("transfer", "workload"),
    ("burst",),
    ("probe", "profiling", "environment"),
    ("diagnosis",),
    ("recipe",),
    ("memory",),
    ("search",),
    ("cluster",),
    ("report",),
    ("verify",),
    ("api", "run_folder"),
    ("online",),
    ("cli", "__main__"),
    ("benchmarks",),  # not installed; autotune.cli.lab loads its commands by path in a clone
)
LAYER_OF = {name: level for level, names in enumerate(LAYERS) for name in names}


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """module -> the modules of autotune and benchmarks it imports (a `from pkg import sub` names
    sub)."""
    modules = {_module_name(p): p for package in PACKAGES for p in (REPO / package).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith(PACKAGES)
            ):
                for alias in node.names:  # a submodule, or a name defined in the module itself
                    sub = f"{node.module}.{alias.name}"
                    found.add(sub if sub in modules else node.module)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith(PACKAGES))
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def _unit(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "benchmarks":
        return "benchmarks"
    return parts[1] if len(parts) > 1 else "autotune"


def test_every_package_has_a_layer():
    units = {_unit(m) for m in _imports()} - {"autotune"}
    assert units <= set(LAYER_OF), f"give these a layer in LAYERS: {sorted(units - set(LAYER_OF))}"


def test_the_package_never_imports_the_benchmarks():
    named = sorted(
        f"{module} -> {target}"
        for module, targets in _imports().items()
        for target in targets
        if module.startswith("autotune") and target.startswith("benchmarks")
    )
    assert named == []


def test_packages_import_only_their_own_layer_or_lower():
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in _imports().items()
        for target in targets
        if _unit(module) != "autotune"  # the package's facade re-exports from above
        and LAYER_OF.get(_unit(target), -1) > LAYER_OF.get(_unit(module), -1)
    )
    assert upward == []


def test_no_import_cycles():
    graph = _imports()
    cycles = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycles.append(" -> ".join(path[path.index(target) :] + [target]))
            elif target not in state:
                visit(target, path + [target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    # A package's __init__ importing its own submodules is not a cycle unless one imports back.
    assert cycles == []
