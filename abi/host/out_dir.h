/* The output folder of `plume cook`: one cook at a time, noticing when the folder goes away,
 * and clearing what killed cooks left in it.
 *
 * A cook holds DIR/.plume_lock with flock for its whole run (the kernel drops the lock when the
 * process ends, however it ends, so no stale lock survives a killed job). Two bakes writing one
 * folder would interleave frames and checkpoints of different runs. Everything here runs on the
 * CLI's main thread; messages go to stderr through cli_error. */
#ifndef PLUME_HOST_OUT_DIR_H
#define PLUME_HOST_OUT_DIR_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Takes the folder's lock. Returns its descriptor (the caller closes it at the end); or -1
 * when another cook holds it, -2 when it cannot be made or taken, with why in `why` (the
 * holder's pid and host when known). */
int outdir_lock(const char *dir, char *why, size_t n);

/* 1 while DIR/.plume_lock is still the file fd locks; 0 when the folder or the lock was
 * removed or replaced (rm -rf of the folder mid-cook: the export would make a new, unlocked
 * folder and the frames written before would be gone). */
int outdir_lock_intact(int fd, const char *dir);

/* Removes, from the folder itself, the hidden temporary files of Plume's atomic writes of .vdb
 * files (".NAME.vdb.tmpPID.N", ".NAME.vdb.tmp-PID-N" and both nested) whose process is gone: a
 * job killed with SIGKILL mid-write leaves them, and nothing else ever would. Call it with the
 * lock held and before this cook writes anything: no other cook writes there, and a file with
 * this process's pid is then a predecessor's. Files of another live process of that pid on
 * this machine are kept (a `plume vdb convert` into the folder); a process on another machine
 * writing into a shared folder outside any cook is not seen. Returns how many were removed and
 * adds their size to *bytes. */
int outdir_clean_temps(const char *dir, uint64_t *bytes);

/* The file an output pattern names for `frame`: the plugin's rule (org.plume.vdb.export,
 * docs/nodes.md): a run of '#' becomes the frame zero-padded to the run's width; a pattern
 * without '#' gets "_####" before its extension. */
void outdir_frame_path(const char *pattern, int64_t frame, char *out, size_t n);

/* After the folder was removed under a cook (outdir_lock_intact 0) and every write of the cook
 * has finished: the writer may have made the folder again for the frames still queued (at most
 * the last three before `last`), which would read as a bake missing its first frames. Unless a
 * lock file says another cook owns the new folder, removes each file the patterns name inside
 * dir (no ".." on the way) for those frames that was modified at or after `not_before` (when
 * the old folder was last seen: a folder put there by someone else keeps its older files), then
 * each folder on the way up to dir (dir included) that this leaves empty. Returns how many files
 * it removed. */
int outdir_drop_recreated(const char *dir, char *const *patterns, uint32_t npatterns, int64_t first,
                          int64_t last, time_t not_before);


#endif
