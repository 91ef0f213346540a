/* Helpers shared by the vdbio tests: checks, temporary folders, running the reference tools,
 * and comparing what vdbio reads with what pyopenvdb reported (vdb_reference.py dump). */
#ifndef PLUME_VDBIO_TEST_UTIL_H
#define PLUME_VDBIO_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "vdbio/vdbio.h"

#define SKIP_CODE 77

extern int tu_failures;

#define CHECK(cond, ...)                                                                     \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            tu_failures++;                                                                   \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);         \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
        }                                                                                    \
    } while (0)

/* A fresh folder under $TMPDIR (or /tmp); the caller frees the string. */
char *tu_make_temp_dir(const char *tag);
/* Removes a folder and the plain files in it (tests make flat folders only). */
void tu_remove_dir(const char *dir);
/* Entries in a folder other than . and .., or -1. */
int tu_count_entries(const char *dir);
/* Runs a shell command; returns its exit status (-1 if it could not run or died by a signal)
 * and, when out is not NULL, its stdout+stderr (caller frees). */
int tu_run(const char *cmd, char **out);
/* Copies the first n bytes of src to dst; 0 on success. */
int tu_copy_prefix(const char *src, const char *dst, long n);
long tu_file_size(const char *path);
/* Reads a whole file (caller frees); *len receives its size. NULL on failure. */
char *tu_read_file(const char *path, long *len);
int tu_write_file(const char *path, const void *data, size_t len);
int tu_is_dir(const char *path);
/* *.vdb files of a folder, sorted, as full paths; returns the count (list freed by the caller
 * with tu_free_list). */
int tu_list_vdb(const char *dir, char ***out);
void tu_free_list(char **list, int n);
/* Runs "PYTHON SCRIPT dump VDB JSON". Returns 0, SKIP_CODE when pyopenvdb is missing, or 1. */
int tu_reference_dump(const char *python, const char *script, const char *vdb, const char *json);

/* Compares an open file with the reference JSON of the same file. tol = 0 means values must be
 * equal bit for bit (as floats); otherwise |a - b| <= tol * |b| + tol * 2^-13 (for half floats).
 * Returns the number of failed checks (also added to tu_failures). */
int tu_compare_reference(const plm_vdb_file *file, const char *json_path, double tol);

/* Compares two grids leaf by leaf: same leaf set (origins), masks, and values within tol as above.
 * label names the pair in messages. Returns failed checks. */
int tu_compare_grids(const plm_vdb_grid *a, const plm_vdb_grid *b, double tol, const char *label);

/* Copies a supported grid into a new one (same name, class, background, transform, metadata
 * except OpenVDB's reserved keys) through plm_vdb_read_leaf / plm_vdb_grid_add_leaf. */
plm_vdb_grid *tu_copy_grid(const plm_vdb_grid *src);

#endif
