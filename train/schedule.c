/* SPDX-License-Identifier: BSD-3-Clause */
/* schedule.c - linear scaling, warm-up and decay on plateau (see schedule.h). */
#include "schedule.h"

#include <math.h>

#define PLATEAU_THRESHOLD 1e-4 /* relative improvement that counts, as PyTorch's default */

void lr_schedule_init(struct lr_schedule *s, float base, int ranks, int scale, long warmup_steps,
                      float plateau_factor, int patience, float min_lr)
{
    *s = (struct lr_schedule){.lr = base * (scale ? (float)ranks : 1.0f),
                              .warmup_steps = warmup_steps > 0 ? warmup_steps : 0,
                              .plateau_factor = plateau_factor,
                              .patience = patience,
                              .min_lr = min_lr,
                              .best = INFINITY};
}

float lr_schedule_at(const struct lr_schedule *s, long step)
{
    if (step < s->warmup_steps)
        return s->lr * (float)(step + 1) / (float)s->warmup_steps;
    return s->lr;
}

int lr_schedule_epoch_end(struct lr_schedule *s, double loss)
{
    if (loss < s->best * (1.0 - PLATEAU_THRESHOLD)) {
        s->best = loss;
        s->bad_epochs = 0;
        return 0;
    }
    if (s->plateau_factor <= 0 || ++s->bad_epochs <= s->patience)
        return 0;
    s->bad_epochs = 0;
    float next = s->lr * s->plateau_factor;
    if (next < s->min_lr)
        next = s->min_lr;
    int decayed = next < s->lr;
    s->lr = next;
    return decayed;
}
