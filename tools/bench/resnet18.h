/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * resnet18.h - the number of floats in each of ResNet-18's 62 parameter
 * tensors, in the order of model.parameters() (11,689,512 in all): the
 * gradient allreduces of one training step, for `collie bench fusion` and
 * the fusion tests.
 */
#ifndef COLLIE_RESNET18_H
#define COLLIE_RESNET18_H

#include <stddef.h>

#define RESNET18_TENSORS 62

static const size_t resnet18_tensors[RESNET18_TENSORS] = {
    9408,    64,  64,  36864,   64,  64,  36864,  64,  64,  36864,   64,  64,  36864,   64,  64,
    73728,   128, 128, 147456,  128, 128, 8192,   128, 128, 147456,  128, 128, 147456,  128, 128,
    294912,  256, 256, 589824,  256, 256, 32768,  256, 256, 589824,  256, 256, 589824,  256, 256,
    1179648, 512, 512, 2359296, 512, 512, 131072, 512, 512, 2359296, 512, 512, 2359296, 512, 512,
    512000,  1000};

#endif
