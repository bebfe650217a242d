/* numpy's pairwise summation (pairwise_sum of numpy/_core/src/umath/loops_utils.h.src, its block
 * of 128 and its eight accumulators) of the float64 products u[i] * q[i], i < n: the sum that
 * numpy's add.reduce makes of a contiguous float64 array, so a result here has its bits. Shared
 * by _scan.c (exact scores) and _rows.c (a row's sum of squares: u = q). */
#ifndef V22_PAIRWISE_H
#define V22_PAIRWISE_H

#include <stdint.h>

static double v22_pairwise(const float *u, const float *q, int64_t n)
{
    if (n < 8) {
        double r = 0.0;
        for (int64_t i = 0; i < n; i++)
            r += (double)u[i] * (double)q[i];
        return r;
    }
    if (n <= 128) {
        double r[8];
        for (int j = 0; j < 8; j++)
            r[j] = (double)u[j] * (double)q[j];
        int64_t i;
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++)
                r[j] += (double)u[i + j] * (double)q[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += (double)u[i] * (double)q[i];
        return res;
    }
    int64_t n2 = n / 2;
    n2 -= n2 % 8;
    return v22_pairwise(u, q, n2) + v22_pairwise(u + n2, q + n2, n - n2);
}

#endif
