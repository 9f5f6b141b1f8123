/* SPDX-License-Identifier: BSD-3-Clause */
/* rows_io.c - rows as tab-separated lines, how measuring jobs hand them to the driver. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define FORMAT                                                                                     \
    "%7s\t%d\t%d\t%d\t%d\t%zu\t%zu\t%d\t%d\t%d\t%lf\t%lf\t%lf\t%lf\t%lf\t%lf\t%lld\t%23[^\n]\n"

int bench_rows_append_raw(const struct bench_row *r, const char *path)
{
    FILE *f = fopen(path, "a");
    if (!f)
        return -1;
    fprintf(f,
            "%s\t%d\t%d\t%d\t%d\t%zu\t%zu\t%d\t%d\t%d\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\t%.3f\t%"
            "lld\t%s\n",
            r->backend, r->coll, r->round, r->ranks, r->local_size, r->bytes, r->count,
            (int)r->dtype, (int)r->op, r->inplace, r->mean_us, r->median_us, r->comm_us, r->comp_us,
            r->comm_cpu_us, r->handoff_ns, r->wrong, r->algo);
    return fclose(f) ? -1 : 0;
}

int bench_rows_read_raw(struct bench_rows *rows, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    struct bench_row r = {0};
    int dtype, op;
    while (fscanf(f, FORMAT, r.backend, &r.coll, &r.round, &r.ranks, &r.local_size, &r.bytes,
                  &r.count, &dtype, &op, &r.inplace, &r.mean_us, &r.median_us, &r.comm_us,
                  &r.comp_us, &r.comm_cpu_us, &r.handoff_ns, &r.wrong, r.algo) == 18) {
        if (r.coll < 0 || r.coll >= BENCH_NCOLLS || dtype < 0 || dtype > COLLIE_INT64 || op < 0 ||
            op > COLLIE_AVG)
            break;
        r.dtype = (collie_dtype)dtype;
        r.op = (collie_op)op;
        bench_rows_add(rows, &r);
    }
    fclose(f);
    return 0;
}
