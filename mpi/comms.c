/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * comms.c - which collie communicator an MPI communicator has.
 *
 * MPI_COMM_WORLD has the one init.c made.  A communicator made by
 * MPI_Comm_dup, MPI_Comm_split, MPI_Comm_split_type or MPI_Comm_create
 * from one that has a collie communicator gets a collie sub-communicator
 * (collie_comm_split of the parent's), cached on it as an MPI attribute: the
 * attribute's delete callback finalizes it when the program frees the
 * communicator (or at MPI_Finalize), so it follows the MPI communicator's
 * life.  Every other communicator (MPI_COMM_SELF, intercommunicators,
 * MPI_Comm_create_group, MPI_Comm_idup, ...) has none: its collectives go
 * to MPI.
 *
 * One path for all four constructors: the new communicator's colour is the
 * parent rank of its rank 0 (broadcast within it), its key the rank MPI gave,
 * so collie's ranks are MPI's; and the ranks of the new communicator agree
 * (PMPI_Allreduce) that every one of them got its collie twin, or none keeps it.
 */
#include <pthread.h>
#include <stdlib.h>

#include "interpose.h"

struct held {
    collie_comm *comm;
    struct held *prev, *next;
};

static int keyval = MPI_KEYVAL_INVALID;
static collie_comm *world;
static struct held registry; /* a ring: registry.next is the first, registry.prev the last */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

static int delete_attr(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm, (void)key, (void)extra;
    struct held *h = value;
    pthread_mutex_lock(&registry_lock);
    h->prev->next = h->next;
    h->next->prev = h->prev;
    collie_comm *c = h->comm;
    pthread_mutex_unlock(&registry_lock);
    collie_finalize(c); /* NULL once cmpi_comms_finalize took it */
    free(h);
    return MPI_SUCCESS;
}

int cmpi_comms_init(collie_comm *world_comm)
{
    registry.next = registry.prev = &registry;
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_attr, &keyval, NULL) != MPI_SUCCESS)
        return -1;
    world = world_comm;
    return 0;
}

void cmpi_comms_finalize(void)
{
    pthread_mutex_lock(&registry_lock);
    for (struct held *h = registry.next; h && h != &registry; h = h->next) {
        collie_finalize(h->comm);
        h->comm = NULL; /* the attribute may still be deleted later */
    }
    pthread_mutex_unlock(&registry_lock);
    if (keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&keyval);
    world = NULL;
}

collie_comm *cmpi_comm(MPI_Comm comm)
{
    if (!world || comm == MPI_COMM_NULL)
        return NULL;
    if (comm == MPI_COMM_WORLD)
        return world;
    void *value;
    int found = 0;
    if (PMPI_Comm_get_attr(comm, keyval, &value, &found) != MPI_SUCCESS || !found)
        return NULL;
    return ((struct held *)value)->comm;
}

/* Gives child (made from parent, collectively over parent) its collie communicator. */
static void derive(MPI_Comm parent, MPI_Comm child)
{
    collie_comm *pc = cmpi_comm(parent);
    if (!pc)
        return; /* the same on every rank of parent */
    int color = -1, key = 0, parent_rank;
    PMPI_Comm_rank(parent, &parent_rank);
    if (child != MPI_COMM_NULL) {
        color = parent_rank;
        PMPI_Comm_rank(child, &key);
        PMPI_Bcast(&color, 1, MPI_INT, 0, child);
    }
    collie_comm *cc = NULL;
    collie_status st = collie_comm_split(pc, color, key, &cc);
    if (child == MPI_COMM_NULL) {
        collie_finalize(cc);
        return;
    }
    int size, ok, all;
    PMPI_Comm_size(child, &size);
    ok = st == COLLIE_OK && cc && collie_rank(cc) == key && collie_size(cc) == size;
    struct held *h = ok ? malloc(sizeof *h) : NULL;
    if (h) {
        h->comm = cc;
        pthread_mutex_lock(&registry_lock);
        h->prev = registry.prev;
        h->next = &registry;
        registry.prev->next = h;
        registry.prev = h;
        pthread_mutex_unlock(&registry_lock);
        if (PMPI_Comm_set_attr(child, keyval, h) != MPI_SUCCESS) {
            delete_attr(child, keyval, h, NULL);
            h = NULL;
            cc = NULL;
        }
    }
    ok = h != NULL;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, child);
    if (all)
        return;
    if (h)
        PMPI_Comm_delete_attr(child, keyval); /* finalizes cc */
    else
        collie_finalize(cc);
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    int rc = PMPI_Comm_dup(comm, newcomm);
    if (rc == MPI_SUCCESS)
        derive(comm, *newcomm);
    return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    int rc = PMPI_Comm_split(comm, color, key, newcomm);
    if (rc == MPI_SUCCESS)
        derive(comm, *newcomm);
    return rc;
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    int rc = PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
    if (rc == MPI_SUCCESS)
        derive(comm, *newcomm);
    return rc;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    int rc = PMPI_Comm_create(comm, group, newcomm);
    if (rc == MPI_SUCCESS)
        derive(comm, *newcomm);
    return rc;
}
