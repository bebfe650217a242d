"""Run ``tokenize_file`` on each input of a JSON case list and report its peak memory and time.

    python peak.py CASES.json   (CASES: [{"modality": "vision", "path": "...", "warm": "..."}])

One process imports v22sdk and tokenizes each modality's small ``warm`` file (so that lazy imports
and library start-up are paid), then forks once per case: the child measures its resident memory
before the call, runs it, and reports ``ru_maxrss`` after it minus that (an upper bound of what the
call added: ``ru_maxrss`` is the child's high-water mark), the CPU seconds the call took, and the
error message if it raised. Prints one JSON list, in case order, on stdout.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import sys
import time


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _one(modality, path: str) -> dict:
    from v22sdk import InputError

    gc.collect()
    before = _rss()
    cpu, wall = time.process_time(), time.perf_counter()
    error = kind = None
    try:
        modality.tokenize_file(path)
    except InputError as exc:
        error, kind = str(exc), type(exc).__name__
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"added_mib": max(0, peak - before) / (1 << 20), "cpu_s": cpu, "wall_s": wall, "error": error, "kind": kind}


def main(cases_file: str) -> None:
    from v22sdk import get_registry

    cases = json.loads(open(cases_file).read())
    registry = get_registry()
    modalities = {}
    for case in cases:
        name = case["modality"]
        if name not in modalities:
            modalities[name] = registry.modality(name)
            if case.get("warm"):
                modalities[name].tokenize_file(case["warm"])
    results = []
    for case in cases:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: one case, then out without cleanup
            os.close(r)
            try:
                out = _one(modalities[case["modality"]], case["path"])
            except BaseException as exc:  # noqa: BLE001 - reported, not raised
                out = {"added_mib": None, "error": f"{type(exc).__name__}: {exc}", "kind": "crash"}
            os.write(w, json.dumps(out).encode())
            os._exit(0)
        os.close(w)
        chunks = []
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(r)
        _, status = os.waitpid(pid, 0)
        raw = b"".join(chunks)
        results.append(
            json.loads(raw) if raw else {"added_mib": None, "error": f"child died ({status})", "kind": "crash"}
        )
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
