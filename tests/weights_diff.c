/* SPDX-License-Identifier: BSD-3-Clause */
/* weights_diff.c - the largest absolute difference between two float32 files of equal length. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    FILE *a = fopen(argv[1], "rb"), *b = fopen(argv[2], "rb");
    if (!a || !b)
        return 2;
    float x, y;
    double worst = 0;
    long n = 0;
    while (fread(&x, 4, 1, a) == 1) {
        if (fread(&y, 4, 1, b) != 1)
            return 2;
        double d = fabs((double)x - (double)y);
        worst = d > worst || isnan(d) ? (isnan(d) ? INFINITY : d) : worst;
        n++;
    }
    if (fread(&y, 4, 1, b) == 1 || n == 0)
        return 2;
    printf("%g\n", worst);
    return 0;
}
