/* The memory's exact top-1 scan in one compiled routine (v22sdk.memory._scan).
 *
 * What v22sdk.memory.scoring.prune does for k = 1 (its numpy path stays the fallback and the
 * oracle of the tests), without the fixed cost of some thirty numpy calls a read:
 *
 *   1. the cosine of every row with the query (a 256-D float32 dot product, eight lanes, two
 *      accumulators; one pass over the rows, as FAISS's IndexFlatIP makes) and the row of best
 *      cosine (the first of equal ones, as argmax);
 *   2. the floor: that row's hybrid score (0.6 cos + 0.4 Jaccard, in double, as the numpy path
 *      computes it with Python numbers) less the margin and 1e-6, turned into the cosine below
 *      which no row can reach it (a Jaccard is at most 1; less a slack);
 *   3. for the rows at or above that cosine only, the float32 fast score of scoring.fast_scores
 *      (the same float32 operations, in the same order), and the candidates: every such row
 *      within the margin of the best fast score;
 *   4. the candidates' exact scores, bit for bit those of scoring.exact_scores (float64 products
 *      of the float32 values, summed in numpy's pairwise order), and the winner: the higher
 *      score, then the higher id (scoring.pick_topk).
 *
 * The cosines of steps 1-3 differ from BLAS's or FAISS's in the last float32 bits only, which the
 * margin absorbs (as it absorbs theirs). Floating-point contraction is off (-ffp-contract=off) so that every CPU gets the
 * same bits: the lanes and the order of the sums are fixed by the code, not by the vector width.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "_pairwise.h"

#define DIM 256
#define W_COS 0.6
#define W_JAC 0.4
#define MAX_WORDS 1024 /* mask words (65,536 attribute names); the caller runs numpy beyond */

typedef float v8 __attribute__((vector_size(32)));

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define V22_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define V22_CLONES
#endif

/* Pass 1: cosines of rows [0, n) into cos; returns the row of the best one (the first). */
V22_CLONES static int64_t cosines(const float *units, int64_t n, const float *q, float *cos)
{
    int64_t top = 0;
    float best = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        const float *u = units + i * DIM;
        v8 acc0 = {0}, acc1 = {0};
        for (int k = 0; k < DIM; k += 16) {
            v8 a, b, x, y;
            memcpy(&a, u + k, sizeof a);
            memcpy(&x, q + k, sizeof x);
            memcpy(&b, u + k + 8, sizeof b);
            memcpy(&y, q + k + 8, sizeof y);
            acc0 += a * x;
            acc1 += b * y;
        }
        v8 acc = acc0 + acc1;
        float c = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        cos[i] = c;
        if (c > best) { /* NaN never wins, as it never does in the numpy path's bound */
            best = c;
            top = i;
        }
    }
    return top;
}

static int32_t intersection(const uint64_t *masks, int64_t row, int64_t rs, int64_t cs, const int64_t *words,
                            const uint64_t *qwords, int64_t nw)
{
    int32_t inter = 0;
    for (int64_t j = 0; j < nw; j++)
        inter += __builtin_popcountll(masks[row * rs + words[j] * cs] & qwords[j]);
    return inter;
}

static int need(Py_buffer *b, Py_ssize_t bytes, const char *what)
{
    if (b->len < bytes) {
        PyErr_Format(PyExc_ValueError, "_scan.top1: %s holds %zd bytes, needs %zd", what, b->len, bytes);
        return 0;
    }
    return 1;
}

static PyObject *top1(PyObject *self, PyObject *args)
{
    Py_buffer units, masks, counts, ids, q, qmask;
    Py_ssize_t rs, cs, n;
    int qcount;
    double margin, slack;
    if (!PyArg_ParseTuple(args, "y*y*nny*y*ny*y*idd:top1", &units, &masks, &rs, &cs, &counts, &ids, &n, &q, &qmask,
                          &qcount, &margin, &slack))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t w = qmask.len / (Py_ssize_t)sizeof(uint64_t);
    int ok = n > 0 && rs >= 0 && cs >= 0 && w <= MAX_WORDS;
    if (!ok)
        PyErr_SetString(PyExc_ValueError, "_scan.top1: need n > 0, strides >= 0 and at most 1,024 mask words");
    ok = ok && need(&units, n * DIM * (Py_ssize_t)sizeof(float), "units") &&
         need(&counts, n * (Py_ssize_t)sizeof(int32_t), "counts") && need(&ids, n * (Py_ssize_t)sizeof(int64_t), "ids") &&
         need(&q, DIM * (Py_ssize_t)sizeof(float), "q") &&
         (w == 0 || need(&masks, ((n - 1) * rs + (w - 1) * cs + 1) * (Py_ssize_t)sizeof(uint64_t), "masks"));
    /* the work arrays, per call (no state shared between threads): cosines, kept rows, their scores */
    char *work = ok ? PyMem_RawMalloc((size_t)n * (2 * sizeof(float) + sizeof(int64_t))) : NULL;
    if (ok && work == NULL) {
        PyErr_NoMemory();
        ok = 0;
    }
    if (ok) {
        const float *u = (const float *)units.buf, *qv = (const float *)q.buf;
        const uint64_t *m = (const uint64_t *)masks.buf, *qm = (const uint64_t *)qmask.buf;
        const int32_t *cnt = (const int32_t *)counts.buf;
        const int64_t *idv = (const int64_t *)ids.buf;
        int64_t *iv = (int64_t *)work;
        float *cv = (float *)(work + (size_t)n * sizeof(int64_t)), *fv = cv + n;
        int64_t wv[MAX_WORDS];
        uint64_t qw[MAX_WORDS];
        int64_t nw = 0, win = -1;
        double best_score = -INFINITY;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t j = 0; j < w; j++) /* only the query's non-zero words are read */
            if (qm[j]) {
                wv[nw] = j;
                qw[nw++] = qm[j];
            }
        int64_t top = cosines(u, n, qv, cv);
        double c = (double)cv[top], floor, jmax;
        if (qcount > 0) {
            int32_t inter = intersection(m, top, rs, cs, wv, qw, nw);
            floor = W_COS * c + W_JAC * ((double)inter / (double)(cnt[top] + qcount - inter)) - margin - 1e-6;
            jmax = 1.0;
        } else {
            floor = W_COS * c - margin - 1e-6;
            jmax = 0.0;
        }
        double cos_min = (floor - W_JAC * jmax) / W_COS - slack;
        const float wc = (float)W_COS, wj = (float)W_JAC;
        float best = -INFINITY;
        int64_t kept = 0;
        for (int64_t i = 0; i < n; i++) {
            if (!((double)cv[i] >= cos_min))
                continue;
            float f;
            if (qcount > 0) {
                /* the popcount bound (scoring._count_bound, the same float32 operations) against
                 * the best fast score so far: a row under it cannot be a candidate, and is passed
                 * over before its mask is read */
                int32_t ci = cnt[i];
                float jub = (float)(ci < qcount ? ci : qcount);
                jub /= (float)(ci > qcount ? ci : qcount);
                jub *= wj;
                if (!(jub + wc * cv[i] >= best - (float)margin))
                    continue;
                int32_t inter = intersection(m, i, rs, cs, wv, qw, nw);
                float jac = (float)inter;
                jac /= (float)(cnt[i] + qcount - inter); /* > 0: the query has at least one bit */
                jac *= wj;
                f = jac + wc * cv[i];
            } else {
                f = wc * cv[i];
            }
            iv[kept] = i;
            fv[kept] = f;
            kept++;
            if (f > best)
                best = f;
        }
        float thr = best - (float)margin;
        for (int64_t r = 0; r < kept; r++) {
            if (!(fv[r] >= thr))
                continue;
            int64_t i = iv[r];
            double score = W_COS * v22_pairwise(u + i * DIM, qv, DIM);
            if (qcount > 0) {
                int32_t inter = intersection(m, i, rs, cs, wv, qw, nw);
                score += W_JAC * ((double)inter / (double)(cnt[i] + qcount - inter));
            } else {
                score += W_JAC * 0.0;
            }
            if (win < 0 || score > best_score || (score == best_score && idv[i] > idv[win])) {
                best_score = score;
                win = i;
            }
        }
        Py_END_ALLOW_THREADS
        if (win < 0)
            result = Py_BuildValue("(Ld)", -1LL, -INFINITY);
        else
            result = Py_BuildValue("(Ld)", (long long)idv[win], best_score);
    }
    PyBuffer_Release(&units);
    PyBuffer_Release(&masks);
    PyBuffer_Release(&counts);
    PyBuffer_Release(&ids);
    PyBuffer_Release(&q);
    PyBuffer_Release(&qmask);
    PyMem_RawFree(work);
    return result;
}

static PyMethodDef methods[] = {
    {"top1", top1, METH_VARARGS,
     "top1(units, masks, row_stride, col_stride, counts, ids, n, q, qmask, qcount, margin, slack)"
     " -> (id, score): the exact hybrid top-1 of rows [0, n) (see the module's source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_scan", "The memory's exact top-1 scan, compiled.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__scan(void)
{
    PyObject *m = PyModule_Create(&module);
    /* what the caller checks against its own: the score's weights and the mask-word limit */
    if (m != NULL && (PyModule_AddObject(m, "W_COS", PyFloat_FromDouble(W_COS)) < 0 ||
                      PyModule_AddObject(m, "W_JAC", PyFloat_FromDouble(W_JAC)) < 0 ||
                      PyModule_AddIntConstant(m, "MAX_WORDS", MAX_WORDS) < 0)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
