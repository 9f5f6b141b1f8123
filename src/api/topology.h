/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topology.h - what the neighbour operations (neighbor.c) read of a
 * topology: one rank's part of it, as the plan the algorithm runs.
 */
#ifndef COLLIE_API_TOPOLOGY_H
#define COLLIE_API_TOPOLOGY_H

#include "../core/op.h"

/*
 * Fills p with rank's in-neighbours and their weights, its out-neighbours
 * (sent as is), its self weight and topo's fingerprint; p points into topo,
 * which must outlive it.  p->wire is left to the caller.
 */
void collie__topology_plan(const collie_topology *topo, int rank, struct collie__nbr_plan *p);

#endif
