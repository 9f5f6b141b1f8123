/* SPDX-License-Identifier: BSD-3-Clause */
/* test_schedule.c - the learning-rate schedule: scaling, warm-up, decay on plateau. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../train/schedule.h"
#include "test_util.h"

static void scaling_and_warmup(void)
{
    struct lr_schedule s;
    lr_schedule_init(&s, 0.01f, 4, 1, 10, 0, 2, 0);
    CHECK(fabsf(lr_schedule_at(&s, 0) - 0.004f) < 1e-7f, "warm-up step 0: %g",
          lr_schedule_at(&s, 0));
    CHECK(fabsf(lr_schedule_at(&s, 4) - 0.02f) < 1e-7f, "warm-up step 4: %g",
          lr_schedule_at(&s, 4));
    CHECK(lr_schedule_at(&s, 9) == 0.04f && lr_schedule_at(&s, 1000) == 0.04f, "after warm-up: %g",
          lr_schedule_at(&s, 9));
    lr_schedule_init(&s, 0.01f, 4, 0, 0, 0, 2, 0);
    CHECK(lr_schedule_at(&s, 0) == 0.01f, "unscaled, no warm-up: %g", lr_schedule_at(&s, 0));
    /* Without a factor the rate never decays, whatever the loss does. */
    for (int e = 0; e < 10; e++)
        CHECK(!lr_schedule_epoch_end(&s, 1.0), "decayed with no factor at epoch %d", e);
    CHECK(s.lr == 0.01f, "rate moved without a factor: %g", s.lr);
}

static void plateau(void)
{
    struct lr_schedule s;
    lr_schedule_init(&s, 0.1f, 1, 1, 0, 0.5f, 2, 0.02f);
    const double loss[] = {1.0,  0.9,  0.8,  0.80001, 0.85, 0.8,  0.7,
                           0.75, 0.75, 0.75, 0.75,    0.75, 0.75, 0.75};
    /* improvement resets the count; the third epoch without one (patience 2) decays */
    const int want[] = {0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0};
    const float rate[] = {0.1f,  0.1f,  0.1f,   0.1f,   0.1f,   0.05f, 0.05f,
                          0.05f, 0.05f, 0.025f, 0.025f, 0.025f, 0.02f, 0.02f};
    for (int e = 0; e < (int)(sizeof loss / sizeof *loss); e++) {
        int got = lr_schedule_epoch_end(&s, loss[e]);
        CHECK(got == want[e] && fabsf(s.lr - rate[e]) < 1e-7f,
              "epoch %d, loss %g: decayed %d (want %d), rate %g (want %g)", e, loss[e], got,
              want[e], s.lr, rate[e]);
    }
    /* at the floor: no further "decay" is reported */
    for (int e = 0; e < 6; e++)
        CHECK(!lr_schedule_epoch_end(&s, 0.75), "decay reported below min_lr");
    CHECK(s.lr == 0.02f, "rate went below min_lr: %g", s.lr);
}

int main(void)
{
    scaling_and_warmup();
    plateau();
    printf("schedule: warm-up, scaling and decay on plateau behave\n");
    return 0;
}
