/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report_async.c - the tables of `collie bench overlap` and `collie bench
 * fusion`: collie beside the baseline, per size (overlap) or per step
 * (fusion), medians of the rounds.
 */
#include <stdio.h>
#include <string.h>

#include "report.h"

static double overlap_of(const struct bench_row *r)
{
    double shorter = r->comm_us < r->comp_us ? r->comm_us : r->comp_us;
    return shorter > 0 ? (r->comm_us + r->comp_us - r->mean_us) / shorter : 0;
}

void bench_print_overlap(const struct bench_opts *o, const struct bench_rows *rows,
                         const size_t *sizes, size_t ns)
{
    struct bench_row a, b;
    bench_merged(rows, "collie", BENCH_OVERLAP, sizes[0], &a);
    printf("#\n# collie bench overlap: %d ranks (%d per host), %s %s; allreduce issued, a "
           "computation as long as it, then the wait%s\n",
           a.ranks, a.local_size, bench_dtype_name(o->dtype), bench_op_name(o->op),
           o->rounds > 1 ? "; median of the rounds" : "");
    printf(
        "# T_comm: the allreduce alone; T_comp: the computation alone; T_both: together\n"
        "# overlap = (T_comm + T_comp - T_both) / min(T_comm, T_comp): 1 all hidden, 0 none\n#\n");
    printf("# comm_cpu: CPU time the process spent per allreduce alone (its threads and system "
           "calls)\n#\n");
    printf("# %12s %11s %11s %11s %11s %8s", "size(B)", "comm(us)", "comm_cpu", "comp(us)",
           "both(us)", "overlap");
    if (bench_has_baseline(o, "mpi"))
        printf(" %11s %11s %11s %11s %8s", "mpi_comm", "mpi_cpu", "mpi_comp", "mpi_both",
               "mpi_ovl");
    printf(" %7s  %s\n", "#wrong", "algo");
    for (size_t s = 0; s < ns; s++) {
        if (!bench_merged(rows, "collie", BENCH_OVERLAP, sizes[s], &a))
            continue;
        int have_b =
            bench_has_baseline(o, "mpi") && bench_merged(rows, "mpi", BENCH_OVERLAP, sizes[s], &b);
        printf("%14zu %11.1f %11.1f %11.1f %11.1f %8.2f", a.bytes, a.comm_us, a.comm_cpu_us,
               a.comp_us, a.mean_us, overlap_of(&a));
        if (have_b)
            printf(" %11.1f %11.1f %11.1f %11.1f %8.2f", b.comm_us, b.comm_cpu_us, b.comp_us,
                   b.mean_us, overlap_of(&b));
        else if (bench_has_baseline(o, "mpi"))
            printf(" %11s %11s %11s %11s %8s", "-", "-", "-", "-", "-");
        printf(" %7lld", a.wrong);
        if (have_b)
            printf("/%lld", b.wrong);
        printf("  %s\n", a.algo);
    }
}

void bench_print_fusion(const struct bench_opts *o, const struct bench_rows *rows,
                        const size_t *sizes, size_t ns)
{
    struct bench_row a, f, b;
    for (size_t s = 0; s < ns; s++) {
        if (!bench_merged(rows, "collie", BENCH_FUSION, sizes[s], &a))
            continue;
        int have_f = bench_merged(rows, "fused", BENCH_FUSION, sizes[s], &f);
        int have_b =
            bench_has_baseline(o, "mpi") && bench_merged(rows, "mpi", BENCH_FUSION, sizes[s], &b);
        printf("#\n# collie bench fusion: %d ranks (%d per host), %zu allreduces of %s %s, %zu "
               "bytes in all, per step%s\n",
               a.ranks, a.local_size, a.count, bench_dtype_name(o->dtype), bench_op_name(o->op),
               a.bytes, o->rounds > 1 ? "; median of the rounds" : "");
        printf("# %-28s %12s %12s %10s %8s\n", "variant", "time(us)", "median(us)", "vs_mpi",
               "#wrong");
        const struct bench_row *list[3] = {&a, have_f ? &f : NULL, have_b ? &b : NULL};
        const char *names[3] = {"collie, one call per tensor", "collie, fused (group)",
                                "mpi, one call per tensor"};
        for (int i = 0; i < 3; i++) {
            if (!list[i])
                continue;
            printf("  %-28s %12.1f %12.1f", names[i], list[i]->mean_us, list[i]->median_us);
            if (have_b)
                printf(" %9.2fx", b.mean_us / list[i]->mean_us);
            else
                printf(" %10s", "-");
            printf(" %8lld\n", list[i]->wrong);
        }
        if (have_f)
            printf("# fused: %.2fx the one-call-per-tensor step (COLLIE_FUSION_BYTES)\n",
                   a.mean_us / f.mean_us);
    }
}
