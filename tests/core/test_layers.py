"""The layering contract ← plugins ← engine ← memory ← CLI, checked over the real import graph.

grimp (import-linter's graph builder) parses every import statement of the package, including
the ones inside functions that the CLI uses to stay light, so a lazy import that points upward
fails here just like a top-level one. Two properties are checked:

* no module imports a module of a higher layer (``LAYERS`` below, lowest first; the most specific
  prefix decides a module's layer, and a module no prefix names fails the test, so a new module
  must be placed);
* no import circle at all between modules (a circle inside one layer is still a circle: a module
  of it cannot be imported, tested or understood alone).

Each subsystem's click commands (``engine/cli.py``, ``memory/cli.py``, ...) live next to the code
they drive but belong to the CLI layer: they are what ``v22sdk/cli.py`` loads lazily per command.
"""

from __future__ import annotations

import grimp
import pytest

#: layers, lowest first: module-name prefixes per layer
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "base",
        (
            "v22sdk.errors",
            "v22sdk._io",
            "v22sdk._paths",
            "v22sdk._startup",
            "v22sdk._options",
            "v22sdk._arrow",
            "v22sdk.evidence",
            "v22sdk.inputs",
            "v22sdk.decoding",
            "v22sdk.blas",
            "v22sdk.fixed",
        ),
    ),
    ("contract", ("v22sdk.contract", "v22sdk.schema", "v22sdk.modality", "v22sdk.tabular")),
    # the hookspecs and registry, the package root that re-exports the public API, the contract kit,
    # the built-in modality plugins, and the on-disk shard format (read by the engine's data loader)
    (
        "plugins",
        (
            "=v22sdk",
            "v22sdk.hookspecs",
            "v22sdk.plugins",
            "v22sdk.testing",
            "v22sdk_text",
            "v22sdk_vision",
            "v22sdk_audio",
            "v22sdk.scale.shards",
            "v22sdk.token_dataset",
        ),
    ),
    ("engine", ("v22sdk.engine",)),
    ("memory", ("v22sdk.memory",)),
    ("applications", ("v22sdk.scale", "v22sdk.specdec", "v22sdk.scaffold")),
    (
        "cli",
        (
            "v22sdk.cli",
            "v22sdk.__main__",
            "v22sdk.testing.cli",
            "v22sdk.memory_command",
            "v22sdk.engine.cli",
            "v22sdk.engine.data.cli",
            "v22sdk.memory.cli",
            "v22sdk.scale.cli",
            "v22sdk.specdec.cli",
            "v22sdk.scaffold.cli",
        ),
    ),
]

PACKAGES = ("v22sdk", "v22sdk_text", "v22sdk_vision", "v22sdk_audio")


def layer_of(module: str) -> int | None:
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for rank, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            exact = p.startswith("=")  # "=v22sdk": the package's __init__ only, not everything under it
            name = p.lstrip("=")
            hit = module == name or (not exact and module.startswith(name + "."))
            if hit and (best is None or len(name) > best[0]):
                best = (len(name), rank)
    return None if best is None else best[1]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def edges(graph: grimp.ImportGraph) -> list[tuple[str, str]]:
    return sorted(
        (m, i) for m in graph.modules for i in graph.find_modules_directly_imported_by(m) if i.split(".")[0] in PACKAGES
    )


def upward(graph: grimp.ImportGraph) -> list[str]:
    bad = []
    for importer, imported in edges(graph):
        a, b = layer_of(importer), layer_of(imported)
        if a is not None and b is not None and b > a:
            line = graph.get_import_details(importer=importer, imported=imported)
            at = f" (line {line[0]['line_number']})" if line else ""
            bad.append(f"{importer} [{LAYERS[a][0]}] imports {imported} [{LAYERS[b][0]}]{at}")
    return bad


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    adj: dict[str, list[str]] = {m: [] for m in graph.modules}
    for a, b in edges(graph):
        adj[a].append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(adj):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
                on_stack.add(v)
            if i < len(adj[v]):
                work.append((v, i + 1))
                w = adj[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            for w in adj[v]:
                if w in on_stack:
                    low[v] = min(low[v], low[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_every_module_has_a_layer(graph):
    assert sorted(m for m in graph.modules if layer_of(m) is None) == []


def test_no_module_imports_a_higher_layer(graph):
    assert upward(graph) == []


def test_no_import_circle(graph):
    assert circles(graph) == []


def test_the_checks_catch_an_upward_import_and_a_circle():
    """The circles that were cut (the two of the layering issue, and the memory store's with its
    recovery tools), put back into a copy of the graph, are found."""
    g = grimp.build_graph(*PACKAGES, cache_dir=None)
    assert circles(g) == []
    g.add_import(importer="v22sdk.scale.cli", imported="v22sdk.cli")  # parse_config, before
    g.add_import(importer="v22sdk.scale.ddp", imported="v22sdk.engine.cli")  # --set parsing, before
    g.add_import(importer="v22sdk.engine.runner", imported="v22sdk.memory.tiered")
    bad = upward(g)
    assert any(s.startswith("v22sdk.scale.ddp [applications] imports v22sdk.engine.cli [cli]") for s in bad)
    assert any(s.startswith("v22sdk.engine.runner [engine] imports v22sdk.memory.tiered [memory]") for s in bad)
    found = circles(g)
    assert any({"v22sdk.cli", "v22sdk.scale.cli"} <= set(c) for c in found)
    assert any({"v22sdk.scale.ddp", "v22sdk.engine.cli", "v22sdk.scale.cli"} <= set(c) for c in found)
    # inside one layer: no upward import, still a circle (sqlite_tier imported its open-time
    # checks from recovery, which opens SQLiteTier stores)
    g.add_import(importer="v22sdk.memory.sqlite_tier", imported="v22sdk.memory.recovery")
    assert not any("v22sdk.memory.sqlite_tier [" in s for s in upward(g))
    assert ["v22sdk.memory.recovery", "v22sdk.memory.sqlite_tier"] in circles(g)


def test_layer_of_takes_the_most_specific_prefix():
    assert LAYERS[layer_of("v22sdk.engine.cli")][0] == "cli"
    assert LAYERS[layer_of("v22sdk.engine.runner")][0] == "engine"
    assert LAYERS[layer_of("v22sdk.scale.shards")][0] == "plugins"
    assert layer_of("v22sdkx.other") is None
    assert LAYERS[layer_of("v22sdk")][0] == "plugins" and layer_of("v22sdk.somethingnew") is None
