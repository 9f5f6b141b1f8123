/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * init.c - MPI_Init, MPI_Init_thread and MPI_Finalize of the interposer.
 *
 * After PMPI_Init*, collie starts over MPI itself, with NCCL's unique-id
 * pattern: rank 0 draws an id (its rendezvous address and a fresh secret),
 * PMPI_Bcast carries it, every rank joins with collie_init_rank, and a
 * PMPI_Allreduce makes every rank agree that all of them did.  So the user
 * sets no COLLIE_* variable, and a job where collie cannot start (no route
 * between hosts, a limit) runs on MPI alone and says so once.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <stdlib.h>

#include "interpose.h"

static collie_comm *world;
static int error_class = -1;
static int error_codes[COLLIE_ERR_ABORTED + 1];

int cmpi_active(void) { return world != NULL; }

int cmpi_verbose(void)
{
    const char *level = getenv("COLLIE_DEBUG");
    return level && (!strcasecmp(level, "INFO") || !strcasecmp(level, "TRACE"));
}

static int quiet(void)
{
    const char *level = getenv("COLLIE_DEBUG");
    return level && !strcasecmp(level, "NONE");
}

/* One MPI error class for collie, one code per status, each with collie's words. */
static void add_error_codes(void)
{
    if (PMPI_Add_error_class(&error_class) != MPI_SUCCESS) {
        error_class = -1;
        return;
    }
    for (int st = COLLIE_ERR_INVALID_ARG; st <= COLLIE_ERR_ABORTED; st++) {
        char text[MPI_MAX_ERROR_STRING];
        if (PMPI_Add_error_code(error_class, &error_codes[st]) != MPI_SUCCESS) {
            error_codes[st] = 0;
            continue;
        }
        snprintf(text, sizeof text, "collie: %s", collie_strerror((collie_status)st));
        PMPI_Add_error_string(error_codes[st], text);
    }
}

int cmpi_error_code(collie_status status)
{
    if (status > COLLIE_OK && status <= COLLIE_ERR_ABORTED && error_codes[status])
        return error_codes[status];
    return MPI_ERR_OTHER;
}

int cmpi_fail(MPI_Comm comm, collie_comm *cc, collie_status status, const char *call)
{
    int code = cmpi_error_code(status), rank = -1;
    MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_get_errhandler(comm, &handler);
    if (handler == MPI_ERRORS_ARE_FATAL && !quiet())
        fprintf(stderr, "collie-mpi: %s failed on rank %d: %s: %s\n", call, rank,
                collie_strerror(status), collie_last_error(cc));
    if (handler != MPI_ERRHANDLER_NULL && handler != MPI_ERRORS_ARE_FATAL &&
        handler != MPI_ERRORS_RETURN)
        PMPI_Errhandler_free(&handler);
    PMPI_Comm_call_errhandler(comm, code); /* aborts under MPI_ERRORS_ARE_FATAL */
    return code;
}

/* collie for MPI_COMM_WORLD, or NULL (then every call goes to MPI). */
static collie_comm *start(void)
{
    const char *enabled = getenv("COLLIE_MPI");
    if (enabled && !strcmp(enabled, "0"))
        return NULL;
    int rank, size;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    struct {
        int ok;
        collie_unique_id id;
    } draw;
    memset(&draw, 0, sizeof draw);
    char why[256] = "rank 0 could not listen for the rendezvous";
    if (rank == 0 && !(draw.ok = collie_get_unique_id(&draw.id) == COLLIE_OK))
        snprintf(why, sizeof why, "%s", collie_last_error(NULL));
    PMPI_Bcast(&draw, (int)sizeof draw, MPI_BYTE, 0, MPI_COMM_WORLD);
    collie_comm *comm = NULL;
    if (draw.ok && collie_init_rank(&comm, size, &draw.id, rank) != COLLIE_OK)
        snprintf(why, sizeof why, "%s", collie_last_error(NULL));
    if (comm && cmpi_comms_init(comm) != 0) {
        snprintf(why, sizeof why, "MPI_Comm_create_keyval failed");
        collie_finalize(comm);
        comm = NULL;
    }
    /* Every rank must agree, or one would run a collective on collie and another on MPI. */
    int failed = comm ? size : rank, first_failed;
    PMPI_Allreduce(&failed, &first_failed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first_failed < size) {
        if (rank == first_failed && !quiet())
            fprintf(stderr,
                    "collie-mpi: collie could not start (rank %d: %s); the program runs "
                    "on MPI alone\n",
                    rank, why);
        if (comm) {
            cmpi_comms_finalize();
            collie_finalize(comm);
        }
        return NULL;
    }
    add_error_codes();
    return comm;
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        world = start();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        world = start();
    return rc;
}

int MPI_Finalize(void)
{
    cmpi_report();
    cmpi_comms_finalize();
    collie_finalize(world);
    world = NULL;
    return PMPI_Finalize();
}
