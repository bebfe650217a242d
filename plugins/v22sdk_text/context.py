"""Clause and sentence rules over a whole text, as array operations over its words.

Input: the static word rows ``A`` (W, 128), their flags (W,) and the words (for the rare
multi-word English phrases). Output: ``A`` adjusted in place plus the sentence id of every word.
Sentences end at 。！？!?… (the last of a run), at '.' followed by whitespace or the end, and at a
blank line; clauses also end at ，,；;：: and at any line break.
"""

from __future__ import annotations

import numpy as np

from . import lexicon
from .slots import COL
from .words import POS_COLS, WH_COLS, F, _apply_lexicon, _row

_BIG = np.iinfo(np.int64).max


def _has(flags: np.ndarray, name: str) -> np.ndarray:
    return (flags & np.uint64(F[name])) != 0


def _segments(ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Boolean 'word ends a segment' -> (segment id per word, start index per segment)."""
    ids = np.cumsum(ends) - ends
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    return ids.astype(np.int64), starts


def _next_content(content: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of the next and of the previous content word of every word (-1 where none)."""
    w = content.size
    idx = np.flatnonzero(content)
    if idx.size == 0:
        none = np.full(w, -1, dtype=np.int64)
        return none, none
    k = np.searchsorted(idx, np.arange(w), side="right")
    nxt = np.where(k < idx.size, idx[np.minimum(k, idx.size - 1)], -1)
    k = np.searchsorted(idx, np.arange(w), side="left") - 1
    prv = np.where(k >= 0, idx[np.maximum(k, 0)], -1)
    return nxt, prv


def _phrases(A: np.ndarray, flags: np.ndarray, words: list[str]) -> None:
    """Multi-word English connectives ("as a result", "how many"): the phrase's tags replace its words'."""
    table = lexicon.phrases_en()
    lex = lexicon.load_lexicon("en")
    n = len(words)
    for i in np.flatnonzero(_has(flags, "phrase_start")).tolist():  # Python ints: cheaper arithmetic
        for phrase in table[words[i].lower()]:
            j, hit = i, [i]
            for part in phrase[1:]:
                j += 1
                while j < n and words[j].isspace():
                    j += 1
                if j >= n or words[j].lower() != part:
                    break
                hit.append(j)
            else:
                row = _row()
                _apply_lexicon(row, lex["_".join(phrase)])
                tagged = row != 0
                sub = A[hit]
                sub[:, POS_COLS] = 0.0
                sub[:, WH_COLS] = 0.0
                sub[:, tagged] = row[tagged]
                A[hit] = sub
                break


def apply(A: np.ndarray, flags: np.ndarray, words: list[str]) -> np.ndarray:
    """Apply every context rule to ``A`` in place; return the sentence id of each word."""
    W = A.shape[0]
    _phrases(A, flags, words)
    content = _has(flags, "content")
    space = _has(flags, "space")
    # '.' ends a sentence when whitespace or the end follows it
    dot = _has(flags, "dot")
    nxt_space = np.r_[space[1:], True]
    sent_end = _has(flags, "sent_end") | (dot & nxt_space)
    later_end = np.r_[sent_end[1:], False]
    sent_end = (sent_end & ~later_end) | _has(flags, "para")
    A[sent_end, COL["lang.punct.boundary"]] = 1.0
    period = _has(flags, "period") | (dot & nxt_space)
    clause_end = sent_end | _has(flags, "clause_end") | _has(flags, "linebreak") | period
    # a connective (because, 所以, but ...) opens a new clause
    logic = A[:, COL["lang.logic.cause"] : COL["lang.logic.purpose"] + 1].max(axis=1) > 0
    clause_end |= np.r_[logic[1:], False]
    sid, s_starts = _segments(sent_end)
    cid, c_starts = _segments(clause_end)
    nxt, prv = _next_content(content)
    idx = np.arange(W)

    # -- sentence mood and question type --------------------------------------------------------
    sflags = np.bitwise_or.reduceat(flags, s_starts)
    s_period = np.logical_or.reduceat(period, s_starts)
    part_max = np.maximum.reduceat(A[:, COL["lang.question.particle"]], s_starts)
    has = lambda name: (sflags & np.uint64(F[name])) != 0  # noqa: E731
    wh_only = np.where(has("wh") & ~s_period & ~has("excl"), 0.6, 0.0)
    q = np.where(has("qmark"), 1.0, np.where(s_period | has("excl"), 0.0, np.maximum(part_max, wh_only)))
    first = np.minimum.reduceat(np.where(content, idx, _BIG), s_starts)
    s_content = first < _BIG
    first_flags = flags[np.minimum(first, W - 1)]
    imper = np.where(s_content & (q == 0) & ((first_flags & np.uint64(F["imperative"])) != 0), 0.8, 0.0)
    excl = np.where(q == 0, np.where(has("excl"), 1.0, np.where(has("tai") & has("le"), 0.6, 0.0)), 0.0)
    stmt = np.where(s_content & (q == 0) & (imper == 0) & (excl == 0), 0.9, 0.0)
    for name, per_sentence in (("statement", stmt), ("question", q), ("imperative", imper), ("exclamation", excl)):
        A[:, COL[f"lang.mood.{name}"]] = per_sentence[sid]
    A[:, COL["lang.question.yes_no"]] = np.where(~has("wh") & ~has("alt"), q, 0.0)[sid]
    A[:, COL["lang.question.wh"]] = np.where(has("wh"), q, 0.0)[sid]
    A[:, COL["lang.question.alternative"]] = np.where(has("alt"), q, 0.0)[sid]
    A[:, WH_COLS] *= np.where(q > 0, 0.9, 0.35)[sid][:, None].astype(np.float32)

    # -- negation: scope runs from a negator to the end of its clause ------------------------------
    neg = _has(flags, "neg").astype(np.int64)
    cum = np.cumsum(neg)
    base = (cum - neg)[c_starts][cid]
    before = cum - neg - base
    negated = content & (before > 0) & (neg == 0)
    A[negated, COL["lang.neg.negated"]] = 0.9
    clause_negs = np.add.reduceat(neg, c_starts)[cid]
    A[content & (clause_negs >= 2), COL["lang.neg.double"]] = 0.8
    crank = np.cumsum(content) - content
    crank = crank - crank[c_starts][cid]  # content words before this one in its clause
    prohib = _has(flags, "prohib") | (A[:, COL["lang.neg.prohibitive"]] > 0)
    # at the start of its clause, or right after "you" (你别走)
    prev_second = (prv >= 0) & (A[np.maximum(prv, 0), COL["lang.person.second"]] > 0)
    real = prohib & ((crank == 0) | ((crank == 1) & prev_second))
    A[prohib & ~real, COL["lang.neg.prohibitive"]] = 0.0
    clause_prohib = np.logical_or.reduceat(real, c_starts)[cid]
    A[negated & clause_prohib, COL["lang.neg.prohibitive"]] = 0.8
    score = A[:, COL["lang.polarity.score"]]
    score[negated] *= -0.8
    A[:, COL["lang.polarity.positive"]] = np.maximum(score, 0.0)
    A[:, COL["lang.polarity.negative"]] = np.maximum(-score, 0.0)

    # -- neighbour constructions (next/previous content word in the same clause) ------------------
    has_next = (nxt >= 0) & (cid[np.maximum(nxt, 0)] == cid)
    has_prev = (prv >= 0) & (cid[np.maximum(prv, 0)] == cid)
    pos = np.where(A[:, POS_COLS].max(axis=1) > 0, A[:, POS_COLS].argmax(axis=1), -1)
    # a negator before a verb (没有去, 不想) modifies it rather than being the predicate
    neg_adv = (neg > 0) & (np.where(has_next, pos[np.maximum(nxt, 0)], -1) == 1)
    pos = np.where(neg_adv, 3, pos)
    is_verb = (pos == 1) | _has(flags, "be")
    nounlike = (pos == 0) | (pos == 4)
    next_pos = np.where(has_next, pos[np.maximum(nxt, 0)], -1)
    next_flags = np.where(has_next, flags[np.maximum(nxt, 0)], np.uint64(0))
    prev_flags = np.where(has_prev, flags[np.maximum(prv, 0)], np.uint64(0))
    nf = lambda name: (next_flags & np.uint64(F[name])) != 0  # noqa: E731
    pf = lambda name: (prev_flags & np.uint64(F[name])) != 0  # noqa: E731
    nxt_i = np.maximum(nxt, 0)
    # 在 + verb: progressive; 将 + verb: future, 将 + noun: disposal; 会 + verb: future (0.6)
    zai = _has(flags, "zai") & (next_pos == 1)
    A[zai, COL["lang.aspect.progressive"]] = 0.8
    A[zai, COL["lang.tense.present"]] = 0.7
    jiang = _has(flags, "jiang")
    A[jiang & (next_pos == 1), COL["lang.tense.future"]] = 0.9
    A[jiang & ((next_pos == 0) | (next_pos == 4)), COL["lang.voice.disposal"]] = 0.9
    A[_has(flags, "hui") & (next_pos == 1), COL["lang.tense.future"]] = 0.6
    # be + -ing: progressive on both; be + -ed: passive; have + -ed: perfective; verb + 了/过: perfective
    for aux, form, slot, value in (
        ("be", "ing", "lang.aspect.progressive", 0.9),
        ("be", "ed", "lang.voice.passive", 0.8),
        ("have", "ed", "lang.aspect.perfective", 0.9),
    ):
        hit = _has(flags, aux) & nf(form)
        A[hit, COL[slot]] = value
        A[nxt_i[hit], COL[slot]] = value
    A[
        (pos == 1)
        & (A[nxt_i, COL["lang.aspect.perfective"]] > 0)
        & has_next
        & (A[nxt_i, COL["lang.pos.auxiliary"]] > 0),
        COL["lang.aspect.perfective"],
    ] = 0.7
    # 'so' before an adjective or adverb is a degree word, not a connective
    so = _has(flags, "so") & ((next_pos == 2) | (next_pos == 3))
    for name in ("lang.logic.cause", "lang.sem.result", "lang.pos.conjunction"):
        A[so, COL[name]] = 0.0
    A[so, COL["lang.mod.degree"]] = 0.75
    A[so, COL["lang.sem.degree"]] = 0.8
    A[so, COL["lang.pos.adv"]] = 0.9
    # the word before 'than' is compared
    A[nf("than"), COL["lang.mod.comparative"]] = 0.8
    # capitalised unknown English words are names, less surely at the start of a sentence
    cap = _has(flags, "cap")
    A[cap, COL["lang.entity.proper"]] = np.where(first[sid[cap]] == idx[cap], 0.3, 0.8)

    # -- tense: markers, then half of the clause's strongest marker on its other content words ----
    tcols = [COL["lang.tense.past"], COL["lang.tense.present"], COL["lang.tense.future"]]
    T = A[:, tcols]
    clause_max = np.maximum.reduceat(T, c_starts, axis=0)[cid]
    A[np.ix_(content, np.asarray(tcols, np.intp))] = np.maximum(T[content], 0.5 * clause_max[content])

    # -- syntactic role (one per content word, later rules take precedence) -------------------------
    big = np.where(is_verb, idx, _BIG)
    fv = np.minimum.reduceat(big, c_starts)[cid]
    role = np.full(W, -1)
    conf = np.zeros(W, dtype=np.float32)

    def put(mask, name, value):
        role[mask] = COL[f"lang.syn.{name}"]
        conf[mask] = value

    put(nounlike & (idx < fv) & (fv < _BIG), "subject", 0.7)
    put(nounlike & (idx > fv) & (fv < _BIG), "object", 0.7)
    put(idx == fv, "predicate", 0.8)
    put(is_verb & (idx > fv) & (fv < _BIG), "serial_verb", 0.6)
    put(((pos == 2) & (next_pos == 0)) | (nf("de_attr") & ~_has(flags, "de_attr")), "attributive", 0.7)
    put((pos == 3) | (pos == 6) | ((A[:, COL["lang.sem.time"]] > 0) & (idx < fv)) | nf("di"), "adverbial", 0.7)
    put(pf("de_comp") | ((pos == 2) & pf("be")), "complement", 0.6)
    put(nounlike & pf("causative"), "pivot", 0.7)
    prev_noun = (
        has_prev & np.isin(pos[np.maximum(prv, 0)], (0, 4)) & (A[np.maximum(prv, 0), COL["lang.entity.proper"]] == 0)
    )
    put((A[:, COL["lang.entity.proper"]] >= 0.8) & prev_noun, "appositive", 0.5)
    put(_has(flags, "discourse") | (pos == 9), "independent", 0.7)
    keep = content & (role >= 0)
    A[idx[keep], role[keep]] = conf[keep]

    # -- domain and register: lexicon words 0.9/0.8, the rest of their sentence 0.3 ------------------
    dcols = [COL[n] for n in COL if n.startswith(("lang.domain.", "lang.register."))]
    smax = np.maximum.reduceat(A[:, dcols], s_starts, axis=0)[sid]
    dsel = np.ix_(content, np.asarray(dcols, np.intp))
    A[dsel] = np.maximum(A[dsel], np.where(smax[content] > 0, 0.3, 0.0))
    return sid
