/* SPDX-License-Identifier: BSD-3-Clause */
/* train_main.c - the collie-train executable, which `collie train` runs (tools/collie.c). */
#include "tools.h"

int main(int argc, char **argv) { return collie_tool_train(argc, argv); }
