/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.c - what a user's settings pass through: the COLLIE_* variables'
 * parser (src/core/config.c) and the machine description that
 * COLLIE_MACHINE, `collie sim --machine` and `collie bench --tune` share
 * (src/coll/machine.c).  The first input byte picks which.
 *
 * The promises: a variable parses to a value its type allows, or fails; a
 * description that reads and checks gives a cost model that prices every
 * algorithm of every collective at every size with a non-negative number
 * (never NaN) and chooses one, and writing it reads back to the same text.
 */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "coll/algo.h"
#include "coll/cost.h"
#include "core/config.h"
#include "fuzz.h"

static void variable(const uint8_t *data, size_t size)
{
    if (size < 1)
        return;
    char *text = fuzz_string(data + 1, size - 1);
    if (!text)
        return;
    long long i;
    double d;
    /* Any variable's parser (an INT may be any number): the sanitizers watch it. */
    collie__config_parse((enum collie__config_id)(data[0] % COLLIE_CFG_COUNT), text, &i, &d);
    if (collie__config_parse(COLLIE_CFG_SHM_SLOT, text, &i, &d) == 0)
        FUZZ_ASSERT(i >= -1 && i <= 1ll << 40);
    if (collie__config_parse(COLLIE_CFG_TIMEOUT, text, &i, &d) == 0)
        FUZZ_ASSERT(!*text || (d > 0 && isfinite(d)));
    free(text);
}

/* m as collie__machine_write writes it, in a malloc'd string. */
static char *written(const struct collie__machine *m)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    FUZZ_ASSERT(out);
    collie__machine_write(m, out);
    fclose(out);
    return text;
}

static void machine(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    int fd = fuzz_file(data, size, path, sizeof path);
    if (fd < 0)
        return;
    struct collie__machine m = {.ranks = 4, .cores = 2};
    collie__machine_default_rates(&m);
    if (collie__machine_read(&m, path, err, sizeof err) == 0 &&
        collie__machine_check(&m, err, sizeof err) == 0) {
        for (int coll = 0; coll <= COLLIE_COLL_BARRIER; coll++)
            for (int shift = 0; shift <= 40; shift += 4) {
                size_t bytes = (size_t)1 << shift;
                const struct collie__algo *a = collie__select_on(&m, coll, bytes);
                FUZZ_ASSERT(a);
                FUZZ_ASSERT(a->cost(&m, (double)bytes, 1) >= 0);
            }
        char *first = written(&m);
        char again_path[64];
        int again = fuzz_file((const uint8_t *)first, strlen(first), again_path, sizeof again_path);
        struct collie__machine back = {0};
        FUZZ_ASSERT(again >= 0 && collie__machine_read(&back, again_path, err, sizeof err) == 0);
        char *second = written(&back);
        FUZZ_ASSERT(!strcmp(first, second));
        free(first), free(second);
        close(again);
    } else {
        FUZZ_ASSERT(err[0]);
    }
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    if (size < 1 || size > 16384)
        return 0;
    if (data[0] & 1)
        machine(data + 1, size - 1);
    else
        variable(data + 1, size - 1);
    return 0;
}
