"""Hybrid score, bitmask Jaccard and tie-breaks against a plain-Python reference."""

import numpy as np
import pytest
from _gen import NAMES, make_turn

from v22sdk.memory.ring import RingTier
from v22sdk.memory.scoring import AttrVocab, blob_to_mask, mask_to_blob, search_block, unit_rows


def naive(turns, q, qattrs):
    out = []
    for t in turns:
        a, b = t.sent_vec.astype(np.float64), q.astype(np.float64)
        cos = a @ b / (np.linalg.norm(a) * np.linalg.norm(b))
        u = t.attrs | qattrs
        jac = len(t.attrs & qattrs) / len(u) if u else 0.0
        out.append((0.6 * cos + 0.4 * jac, t.id))
    return sorted(out, key=lambda x: (-x[0], -x[1]))


def test_ring_topk_matches_reference():
    vocab = AttrVocab(NAMES)
    ring = RingTier(300, vocab)
    turns = [make_turn(i).with_id(i, 1.0, i) for i in range(1, 301)]
    ring.batched_put(turns)
    rng = np.random.default_rng(7)
    for _ in range(20):
        q = rng.standard_normal(256).astype(np.float32)
        qa = frozenset(rng.choice(NAMES, 3, replace=False).tolist() + ["unknown.slot"])
        ids, sc = ring.search(unit_rows(q[None]), vocab.mask(qa)[None], np.array([len(qa)]), k=5)
        ref = naive(turns, q, qa)[:5]
        assert ids[0].tolist() == [r[1] for r in ref]
        np.testing.assert_allclose(sc[0], [r[0] for r in ref], rtol=0, atol=1e-6)  # unit rows are float32


def test_ties_go_to_newer_id_and_empty_sets_score_zero_jaccard():
    vocab = AttrVocab(["a", "b"])
    ring = RingTier(10, vocab)
    base = make_turn(1)
    same = [base.with_id(i, 1.0, i) for i in (3, 9, 5)]  # identical content, three ids
    ring.batched_put(same)
    q = unit_rows(base.sent_vec[None])
    ids, sc = ring.search(q, vocab.mask(frozenset())[None], np.array([0]), k=3)
    assert ids[0].tolist() == [9, 5, 3]
    assert sc[0][0] == sc[0][1] == sc[0][2]
    assert abs(sc[0][0] - 0.6) < 1e-6  # cos = 1, Jaccard(empty, empty) = 0


def test_result_does_not_depend_on_layout():
    """Same rows in a different order / block size give bit-identical scores."""
    vocab = AttrVocab(NAMES)
    turns = [make_turn(i).with_id(i, 1.0, i) for i in range(1, 501)]
    units = unit_rows(np.stack([t.sent_vec for t in turns]))
    masks = np.stack([vocab.mask(t.attrs) for t in turns])
    counts = np.bitwise_count(masks).sum(axis=1, dtype=np.int32)
    ids = np.arange(1, 501)
    perm = np.random.default_rng(1).permutation(500)
    q = unit_rows(make_turn(999).sent_vec[None])[0]
    qm = vocab.mask(frozenset(NAMES[:4]))
    a = search_block(ids, units, masks, counts, q, qm, 4, k=10)
    b = search_block(ids[perm], units[perm], masks[perm], counts[perm], q, qm, 4, k=10)
    assert a[0].tolist() == b[0].tolist() and a[1].tobytes() == b[1].tobytes()


def test_mask_blob_roundtrip_and_vocab_growth():
    vocab = AttrVocab()
    names = [f"n{i}" for i in range(700)]  # more than the 512 default bits: masks widen
    for n in names:
        vocab.add(n)
    m = vocab.mask(frozenset(names[::7]))
    assert vocab.names_of(m) == frozenset(names[::7])
    assert np.array_equal(blob_to_mask(mask_to_blob(m), len(m)), m)
    assert mask_to_blob(vocab.mask(frozenset())) == b""


@pytest.mark.parametrize("bad", [np.zeros(255), np.full(256, np.nan)])
def test_turn_rejects_bad_vectors(bad):
    from v22sdk.errors import InputError
    from v22sdk.memory.turn import Turn

    with pytest.raises(InputError, match="sent_vec"):
        Turn(bad, np.zeros(384))


def test_pruned_candidates_equal_the_unpruned_ones():
    """The exact path's prune (Jaccard only for rows that can reach the top k) selects exactly the
    candidates the full fast pass selects, so every exhaustive answer is unchanged, bit for bit."""
    from v22sdk.memory.scoring import AttrVocab, candidates, fast_scores, matvec, prune, unit_rows
    from v22sdk.testing.memory_workload import NAMES, Workload

    w = Workload(seed=4, topics=30)
    s, _, a = w.block(0, 3000)
    vocab = AttrVocab(NAMES)
    units = unit_rows(s)
    masks = np.asfortranarray(np.stack([vocab.mask(x) for x in a]))
    counts = np.bitwise_count(masks).sum(axis=1, dtype=np.int32)
    valid = np.random.default_rng(0).random(3000) > 0.1  # ring slots with holes
    for kind in ("near", "fresh"):
        q, qa, _ = w.queries(kind, 25, 3000, seed=3)
        for i, qu in enumerate(unit_rows(q)):
            attrs = qa[i] if i % 5 else frozenset()
            qm, qc = vocab.mask(attrs), len(attrs)
            cos = matvec(units, qu)
            for k in (1, 2, 5, 20, 40):
                full = fast_scores(cos, masks, counts, qm, qc)
                assert np.array_equal(np.sort(candidates(full, k)), np.sort(prune(cos, masks, counts, qm, qc, k)))
                held = np.where(valid, full, -np.inf)
                want = candidates(held, k)
                want = want[valid[want]]
                got = prune(cos, masks, counts, qm, qc, k, valid=valid)
                assert np.array_equal(np.sort(want), np.sort(got))


def test_single_row_exact_score_and_faiss_intersections_match_the_batch_ones():
    """exact_scores of one row (Python numbers) has the bits of the batch computation, and the
    intersections counted by FAISS's Hamming kernel equal numpy's popcounts."""
    from v22sdk.memory import scoring
    from v22sdk.testing.memory_workload import NAMES, Workload

    w = Workload(seed=5, topics=20)
    s, _, a = w.block(0, 600)
    vocab = AttrVocab(NAMES)
    units = unit_rows(s)
    masks = np.asfortranarray(np.stack([vocab.mask(x) for x in a]))
    counts = np.bitwise_count(masks).sum(axis=1, dtype=np.int32)
    q, qa, _ = w.queries("fresh", 6, 600, seed=2)
    for i, qu in enumerate(unit_rows(q)):
        for attrs in (qa[i], qa[i] | {"not.in.vocab"}, frozenset()):
            qm, qc = vocab.mask(attrs), len(attrs)
            batch = scoring.exact_scores(units, masks, counts, qu, qm, qc)
            one = np.concatenate(
                [
                    scoring.exact_scores(units[r : r + 1], masks[r : r + 1], counts[r : r + 1], qu, qm, qc)
                    for r in range(600)
                ]
            )
            assert one.tobytes() == batch.tobytes()
        rows = np.arange(0, 600, 2)  # > HAMMING_ROWS: FAISS's kernel when installed
        want = np.bitwise_count(masks[rows] & vocab.mask(qa[i])).sum(axis=1)
        got = scoring._intersections(masks, rows, vocab.mask(qa[i]), counts[rows])
        assert np.array_equal(got, want) and got.dtype == np.int32


def test_top1_prune_with_a_raised_floor_keeps_the_unpruned_candidates(monkeypatch):
    """The top-1 path's floor raise (many rows above the first floor) and popcount bound, forced on
    with low thresholds, still select exactly the candidates of the full fast pass."""
    from v22sdk.memory import scoring
    from v22sdk.testing.memory_workload import NAMES, Workload

    monkeypatch.setattr(scoring, "RAISE_ROWS", 40)
    monkeypatch.setattr(scoring, "TOP1_ROWS", 8)
    w = Workload(seed=6, topics=25)
    s, _, a = w.block(0, 2500)
    vocab = AttrVocab(NAMES)
    units = unit_rows(s)
    masks = np.asfortranarray(np.stack([vocab.mask(x) for x in a]))
    counts = np.bitwise_count(masks).sum(axis=1, dtype=np.int32)
    raised = 0
    for kind in ("near", "fresh"):
        q, qa, _ = w.queries(kind, 30, 2500, seed=8)
        for i, qu in enumerate(unit_rows(q)):
            attrs = qa[i] if i % 6 else frozenset()
            qm, qc = vocab.mask(attrs), len(attrs)
            cos = scoring.matvec(units, qu)
            raised += len(scoring._top1_rows(cos, masks, counts, qm, qc)[0]) > 40
            want = scoring.candidates(scoring.fast_scores(cos, masks, counts, qm, qc), 1)
            assert np.array_equal(np.sort(want), np.sort(scoring.prune(cos, masks, counts, qm, qc, 1)))
    assert raised >= 5  # the floor raise did run
