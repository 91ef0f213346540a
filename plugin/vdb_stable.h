/* Writing .vdb files whose bytes depend only on their content.
 *
 * OpenVDB stamps every file it writes with a random UUID (36 ASCII characters in the header),
 * so two writes of the same grids differ. pl_vdb_write_stable writes through vdbio as usual,
 * then replaces that UUID with one derived from the rest of the file's bytes (a 128-bit
 * non-cryptographic hash, formatted as a UUID): equal content gives equal files, different content different
 * UUIDs, which is all readers use it for.
 *
 * pl_vdb_write_stable runs on the context's thread; errors go to the context (pl_fail) and
 * return a status. */
#ifndef PLUME_PLUGIN_VDB_STABLE_H
#define PLUME_PLUGIN_VDB_STABLE_H

#include "plugin/plugin.h"
#include "vdbio/vdbio.h"

/* Writes grids to path atomically (a temporary file beside it, flushed to disk and renamed when
 * complete; on any failure path is untouched and the temporary file removed), with the options
 * `wo` (file metadata, compression, half floats) and the content-derived UUID. Makes the
 * folder when needed. A header this code does not recognise (another OpenVDB file version) is
 * written as OpenVDB made it, with a debug log line. who (NULL: none) begins the error message,
 * e.g. "node 'export'". */
plume_status pl_vdb_write_stable(pl_context *ctx, const char *who, const char *path,
                                 const plm_vdb_grid *const *grids, int count, const plm_vdb_write_options *wo);

/* The same without a context, for a writer thread: grids are only read. On failure the
 * message goes to err and the status is returned; *uuid_left says the header was not one
 * this code knows (the file is written with OpenVDB's random UUID). Any thread. */
plume_status pl_vdb_write_stable_core(const char *path, const plm_vdb_grid *const *grids, int count,
                                      const plm_vdb_write_options *wo, char *err, size_t err_size,
                                      int *uuid_left);

/* Whether the file at path still has the content its UUID was made from: 1 yes, 0 no (its
 * bytes changed after the write: damaged), -1 cannot tell (unreadable, or a UUID this code did
 * not make, e.g. a file OpenVDB wrote with its random one). Reads the whole file. Any thread. */
int pl_vdb_stable_verify(const char *path);

#endif
