/* The per-turn write's row work, compiled (v22sdk.memory._rows).
 *
 * TieredMemory.write of one turn checks its two rows, derives the unit row, commits to L3 and
 * copies the turn into the rings of L2 and L1. In numpy that is some twenty calls a turn, each
 * with its own fixed cost, paid again cold after every fsync. Here it is two kinds of call:
 *
 *   load(sent, mem, sent_out, units_out, mem_out) -> bool
 *       copies a (1, 256) and a (1, 384) float32 array (any strides) into the caller's
 *       preallocated rows and writes the unit row of sent: False, and nothing to use, where an
 *       array is of another shape or type or holds a non-finite value (the caller's general path
 *       then converts it or names it in its error). The unit row is bit for bit
 *       scoring.unit_row's: the float64 squares summed in numpy's pairwise order, each value
 *       divided by the square root in float64 and rounded to float32 once.
 *
 *   Ring(sent, units, mem, masks, counts, ids, times, touched).insert(ring, turn_id, sent,
 *        units, mem, mask, time, touched, text) -> int
 *       RingTier.insert_one of a new turn, all of it: into the ring's head slot go the three
 *       rows, the mask words (``mask``: little-endian bytes; missing words are zero, words past
 *       the ring's width are refused), their popcount, the id, time and recency, and the text;
 *       the turn the slot held leaves the ring's id -> slot map (or a hole is filled), the new
 *       one enters it, and head and filled move on. Returns the slot. A Ring holds the arrays'
 *       buffers (not the ring), so a ring whose arrays are replaced (wider masks, clear) makes a
 *       new one.
 *
 * Every size and type is checked; a mismatch raises ValueError naming the buffer.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "_pairwise.h"

#define SENT 256
#define MEM 384

static int is_float32(const Py_buffer *b)
{
    const char *f = b->format;
    if (f == NULL || b->itemsize != 4)
        return 0;
    if (*f == '=' || *f == '@' || (*f == '<' && PY_LITTLE_ENDIAN))
        f++;
    return f[0] == 'f' && f[1] == '\0';
}

/* A (1, dim) float32 array, any strides, into dst; 0 where it is of another kind. */
static int one_row(PyObject *obj, Py_ssize_t dim, float *dst)
{
    Py_buffer b;
    if (PyObject_GetBuffer(obj, &b, PyBUF_RECORDS_RO) < 0) {
        PyErr_Clear(); /* no buffer: not of this kind, for the general path */
        return 0;
    }
    int ok = is_float32(&b) && b.ndim == 2 && b.shape[0] == 1 && b.shape[1] == dim;
    if (ok) {
        Py_ssize_t step = b.strides[1];
        const char *p = (const char *)b.buf;
        if (step == 4)
            memcpy(dst, p, (size_t)dim * 4);
        else
            for (Py_ssize_t i = 0; i < dim; i++)
                memcpy(dst + i, p + i * step, 4);
    }
    PyBuffer_Release(&b);
    return ok;
}

static int out_row(PyObject *obj, Py_buffer *b, Py_ssize_t dim, const char *what)
{
    if (PyObject_GetBuffer(obj, b, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Format(PyExc_ValueError, "_rows.load: %s is not a writable contiguous buffer", what);
        return 0;
    }
    if (b->len != dim * 4) {
        PyErr_Format(PyExc_ValueError, "_rows.load: %s holds %zd bytes, needs %zd", what, b->len, dim * 4);
        PyBuffer_Release(b);
        return 0;
    }
    return 1;
}

static PyObject *load(PyObject *self, PyObject *args)
{
    PyObject *sent, *mem, *so, *uo, *mo;
    if (!PyArg_ParseTuple(args, "OOOOO:load", &sent, &mem, &so, &uo, &mo))
        return NULL;
    Py_buffer sb, ub, mb;
    if (!out_row(so, &sb, SENT, "sent_out"))
        return NULL;
    if (!out_row(uo, &ub, SENT, "units_out")) {
        PyBuffer_Release(&sb);
        return NULL;
    }
    if (!out_row(mo, &mb, MEM, "mem_out")) {
        PyBuffer_Release(&sb);
        PyBuffer_Release(&ub);
        return NULL;
    }
    float *s = (float *)sb.buf, *u = (float *)ub.buf, *m = (float *)mb.buf;
    int ok = one_row(sent, SENT, s) && one_row(mem, MEM, m);
    double ss = ok ? v22_pairwise(s, s, SENT) : 0.0;
    ok = ok && isfinite(ss); /* finite exactly when every value of sent is */
    for (Py_ssize_t i = 0; ok && i < MEM; i++)
        ok = isfinite(m[i]);
    if (ok) {
        if (ss == 0.0) {
            memset(u, 0, SENT * sizeof(float));
        } else {
            double d = sqrt(ss);
            for (Py_ssize_t i = 0; i < SENT; i++)
                u[i] = (float)((double)s[i] / d);
        }
    }
    PyBuffer_Release(&sb);
    PyBuffer_Release(&ub);
    PyBuffer_Release(&mb);
    return PyBool_FromLong(ok);
}

/* -- Ring ------------------------------------------------------------------------------------ */

enum { R_SENT, R_UNITS, R_MEM, R_MASKS, R_COUNTS, R_IDS, R_TIMES, R_TOUCHED, R_N };
static const char *const names[R_N] = {"sent", "units", "mem", "masks", "counts", "ids", "times", "touched"};
static const char formats[R_N] = {'f', 'f', 'f', 'Q', 'i', 'q', 'd', 'q'};

typedef struct {
    PyObject_HEAD
    Py_buffer b[R_N];
    int held; /* buffers [0, held) are held */
    Py_ssize_t capacity, words;
} Ring;

static void ring_dealloc(Ring *r)
{
    for (int i = 0; i < r->held; i++)
        PyBuffer_Release(&r->b[i]);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

/* the single format character of b (after a byte-order mark for native little-endian) */
static char format_of(const Py_buffer *b)
{
    const char *f = b->format;
    if (f == NULL)
        return 'B';
    if (*f == '=' || *f == '@' || (*f == '<' && PY_LITTLE_ENDIAN))
        f++;
    if (f[0] == '\0' || f[1] != '\0')
        return '?';
    /* numpy names int64 'l' on LP64 platforms and uint64 'L': the same as 'q' and 'Q' there */
    if (f[0] == 'l' && sizeof(long) == 8)
        return 'q';
    if (f[0] == 'L' && sizeof(long) == 8)
        return 'Q';
    return f[0];
}

static int ring_init(Ring *r, PyObject *args, PyObject *kw)
{
    PyObject *o[R_N];
    if (kw != NULL && PyDict_GET_SIZE(kw) != 0) {
        PyErr_SetString(PyExc_TypeError, "_rows.Ring takes its eight arrays by position");
        return -1;
    }
    if (r->held) {
        PyErr_SetString(PyExc_TypeError, "_rows.Ring is initialised once");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "OOOOOOOO:Ring", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &o[7]))
        return -1;
    static const int ndim[R_N] = {2, 2, 2, 2, 1, 1, 1, 1};
    static const Py_ssize_t itemsize[R_N] = {4, 4, 4, 8, 4, 8, 8, 8};
    for (int i = 0; i < R_N; i++) {
        /* the rows must be C-contiguous (one memcpy each); masks may be in any order */
        int flags = (i <= R_MEM) ? (PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) : PyBUF_RECORDS;
        if (PyObject_GetBuffer(o[i], &r->b[i], flags) < 0) {
            PyErr_Format(PyExc_ValueError, "_rows.Ring: %s is not a writable%s array", names[i],
                         i <= R_MEM ? " C-contiguous" : "");
            return -1;
        }
        r->held = i + 1;
        Py_buffer *b = &r->b[i];
        if (b->ndim != ndim[i] || b->itemsize != itemsize[i] || format_of(b) != formats[i]) {
            PyErr_Format(PyExc_ValueError, "_rows.Ring: %s is not a %d-D array of format '%c'", names[i], ndim[i],
                         formats[i]);
            return -1;
        }
    }
    r->capacity = r->b[R_SENT].shape[0];
    r->words = r->b[R_MASKS].shape[1];
    static const Py_ssize_t width[R_N] = {SENT, SENT, MEM, -1, 0, 0, 0, 0};
    for (int i = 0; i < R_N; i++) {
        Py_buffer *b = &r->b[i];
        if (b->shape[0] != r->capacity || (width[i] > 0 && b->shape[1] != width[i])) {
            PyErr_Format(PyExc_ValueError, "_rows.Ring: %s does not have the ring's %zd rows of the right width",
                         names[i], r->capacity);
            return -1;
        }
    }
    if (r->words < 1) {
        PyErr_SetString(PyExc_ValueError, "_rows.Ring: masks need at least one word");
        return -1;
    }
    return 0;
}

static int in_row(PyObject *obj, Py_buffer *b, Py_ssize_t dim, const char *what)
{
    if (PyObject_GetBuffer(obj, b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Format(PyExc_ValueError, "_rows.Ring.insert: %s is not %zd contiguous float32 values", what, dim);
        return 0;
    }
    if (!is_float32(b) || b->len != dim * 4) {
        PyErr_Format(PyExc_ValueError, "_rows.Ring.insert: %s is not %zd contiguous float32 values", what, dim);
        PyBuffer_Release(b);
        return 0;
    }
    return 1;
}

static PyObject *s_head, *s_filled, *s_holes, *s_slot, *s_text; /* RingTier's attributes, interned */

static int int_attr(PyObject *o, PyObject *name, Py_ssize_t *out)
{
    PyObject *v = PyObject_GetAttr(o, name);
    if (v == NULL)
        return 0;
    *out = PyLong_AsSsize_t(v);
    Py_DECREF(v);
    return !(*out == -1 && PyErr_Occurred());
}

static int set_int_attr(PyObject *o, PyObject *name, Py_ssize_t value)
{
    PyObject *v = PyLong_FromSsize_t(value);
    if (v == NULL)
        return 0;
    int rc = PyObject_SetAttr(o, name, v);
    Py_DECREF(v);
    return rc == 0;
}

static PyObject *ring_insert(Ring *r, PyObject *args)
{
    PyObject *ring, *idobj, *so, *uo, *mo, *text;
    Py_buffer mask;
    long long touched;
    double when;
    if (r->held != R_N) {
        PyErr_SetString(PyExc_ValueError, "_rows.Ring was not initialised");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOOOOy*dLO:insert", &ring, &idobj, &so, &uo, &mo, &mask, &when, &touched, &text))
        return NULL;
    Py_buffer sb, ub, mb;
    int have = 0;
    PyObject *result = NULL, *slots = NULL, *texts = NULL;
    Py_ssize_t slot, filled;
    long long id = PyLong_AsLongLong(idobj);
    if (id == -1 && PyErr_Occurred())
        goto done;
    if (!int_attr(ring, s_head, &slot) || !int_attr(ring, s_filled, &filled))
        goto done;
    slots = PyObject_GetAttr(ring, s_slot);
    texts = slots == NULL ? NULL : PyObject_GetAttr(ring, s_text);
    if (texts == NULL)
        goto done;
    if (!PyDict_Check(slots) || !PyList_Check(texts) || PyList_GET_SIZE(texts) != r->capacity) {
        PyErr_SetString(PyExc_ValueError, "_rows.Ring.insert: the ring's slot must be a dict, its text a list "
                                          "of one entry per slot");
        goto done;
    }
    if (slot < 0 || slot >= r->capacity) {
        PyErr_Format(PyExc_ValueError, "_rows.Ring.insert: head %zd outside [0, %zd)", slot, r->capacity);
        goto done;
    }
    if (mask.len % 8 != 0 || mask.len / 8 > r->words) {
        PyErr_Format(PyExc_ValueError, "_rows.Ring.insert: mask holds %zd bytes, needs whole words, at most %zd",
                     mask.len, r->words);
        goto done;
    }
    if (!in_row(so, &sb, SENT, "sent"))
        goto done;
    have = 1;
    if (!in_row(uo, &ub, SENT, "units"))
        goto done;
    have = 2;
    if (!in_row(mo, &mb, MEM, "mem"))
        goto done;
    have = 3;
    /* the turn that leaves the slot leaves the ring's map first: a failure there changes nothing */
    char *id_at = (char *)r->b[R_IDS].buf + slot * r->b[R_IDS].strides[0];
    int64_t old;
    memcpy(&old, id_at, 8);
    if (old >= 0) {
        PyObject *key = PyLong_FromLongLong(old);
        int rc = key == NULL ? -1 : PyDict_DelItem(slots, key);
        Py_XDECREF(key);
        if (rc < 0)
            goto done;
    }
    memcpy((char *)r->b[R_SENT].buf + slot * SENT * 4, sb.buf, SENT * 4);
    memcpy((char *)r->b[R_UNITS].buf + slot * SENT * 4, ub.buf, SENT * 4);
    memcpy((char *)r->b[R_MEM].buf + slot * MEM * 4, mb.buf, MEM * 4);
    const Py_buffer *mk = &r->b[R_MASKS];
    char *row = (char *)mk->buf + slot * mk->strides[0];
    const unsigned char *src = (const unsigned char *)mask.buf;
    Py_ssize_t given = mask.len / 8;
    int32_t count = 0;
    for (Py_ssize_t j = 0; j < r->words; j++) {
        uint64_t v = 0;
        if (j < given)
            for (int k = 7; k >= 0; k--)
                v = (v << 8) | src[8 * j + k];
        memcpy(row + j * mk->strides[1], &v, 8);
        count += __builtin_popcountll(v);
    }
    int64_t id64 = id, touched64 = touched;
    memcpy(id_at, &id64, 8);
    memcpy((char *)r->b[R_COUNTS].buf + slot * r->b[R_COUNTS].strides[0], &count, 4);
    memcpy((char *)r->b[R_TIMES].buf + slot * r->b[R_TIMES].strides[0], &when, 8);
    memcpy((char *)r->b[R_TOUCHED].buf + slot * r->b[R_TOUCHED].strides[0], &touched64, 8);
    if (old < 0 && slot < filled) { /* a removed turn's slot: one hole fewer */
        Py_ssize_t holes;
        if (!int_attr(ring, s_holes, &holes) || !set_int_attr(ring, s_holes, holes - 1))
            goto done;
    }
    Py_INCREF(text);
    PyList_SetItem(texts, slot, text); /* steals the reference, releases the old entry's */
    result = PyLong_FromSsize_t(slot);
    if (result == NULL || PyDict_SetItem(slots, idobj, result) < 0 ||
        !set_int_attr(ring, s_head, slot + 1 < r->capacity ? slot + 1 : 0) ||
        (filled < r->capacity && !set_int_attr(ring, s_filled, filled + 1)))
        Py_CLEAR(result);
done:
    if (have >= 1)
        PyBuffer_Release(&sb);
    if (have >= 2)
        PyBuffer_Release(&ub);
    if (have >= 3)
        PyBuffer_Release(&mb);
    PyBuffer_Release(&mask);
    Py_XDECREF(slots);
    Py_XDECREF(texts);
    return result;
}

static PyObject *ring_masks(Ring *r, void *closure)
{
    if (r->held <= R_MASKS)
        Py_RETURN_NONE;
    PyObject *o = r->b[R_MASKS].obj;
    Py_INCREF(o);
    return o;
}

static PyMethodDef ring_methods[] = {
    {"insert", (PyCFunction)ring_insert, METH_VARARGS,
     "insert(ring, turn_id, sent, units, mem, mask, time, touched, text) -> int: RingTier.insert_one "
     "of a new turn into its head slot (see the module's source); returns the slot."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef ring_getset[] = {
    {"masks", (getter)ring_masks, NULL, "the masks array this Ring writes (a ring that replaces it makes a new Ring)",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject RingType = {
    PyVarObject_HEAD_INIT(NULL, 0)  /* (the macro ends in a comma) */
    .tp_name = "v22sdk.memory._rows.Ring",
    .tp_basicsize = sizeof(Ring),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Ring(sent, units, mem, masks, counts, ids, times, touched): a RingTier's arrays, held for insert().",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)ring_init,
    .tp_dealloc = (destructor)ring_dealloc,
    .tp_methods = ring_methods,
    .tp_getset = ring_getset,
};

static PyMethodDef methods[] = {
    {"load", load, METH_VARARGS,
     "load(sent, mem, sent_out, units_out, mem_out) -> bool: the rows of one turn checked and copied, "
     "and the unit row of sent (see the module's source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rows", "The per-turn write's row work, compiled.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__rows(void)
{
    if (PyType_Ready(&RingType) < 0)
        return NULL;
    if ((s_head = PyUnicode_InternFromString("head")) == NULL ||
        (s_filled = PyUnicode_InternFromString("filled")) == NULL ||
        (s_holes = PyUnicode_InternFromString("holes")) == NULL ||
        (s_slot = PyUnicode_InternFromString("slot")) == NULL || (s_text = PyUnicode_InternFromString("text")) == NULL)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&RingType);
    if (PyModule_AddObject(m, "Ring", (PyObject *)&RingType) < 0 || PyModule_AddIntConstant(m, "SENT_DIM", SENT) < 0 ||
        PyModule_AddIntConstant(m, "MEM_DIM", MEM) < 0) {
        Py_DECREF(&RingType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
