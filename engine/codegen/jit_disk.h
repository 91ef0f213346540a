/* jit_disk.h — compiled objects kept on disk between processes, so that a scene cooked again,
 * or the next chunk of a farm job, loads its kernels instead of compiling them (the smoke
 * scene's first frame is mostly compiling).
 *
 * One file per module, <dir>/<name>.o, name = a hash of the caller's key, the exported symbol
 * names and an identity of everything else that decides the code: the binary that holds this
 * compiler (any change to code generation, to the runtime bitcode baked into it or to the
 * LLVM it links makes new names), the LLVM version, the CPU name and features, the
 * optimization level and the runtime bitcode. So a key must stand for its module on its own,
 * as the engine's IR hashes do; callers with ad-hoc keys (tests) leave the cache off.
 *
 * A file is a header (magic, format version, name, instruction count, object size, checksum)
 * then the object's bytes. One that does not check out (truncated, overwritten) is ignored;
 * the compile that follows writes it again. Writes go to a temporary name in the same folder
 * and are renamed over the file, so readers in other processes see a whole file or none.
 * Nothing here fails a compile: a folder that cannot be made or written only means compiling
 * next time too. `rm -r` of the folder is always safe.
 *
 * Size. Every build and CPU writes files of its own, so the folder would only grow: the first
 * jit_disk_open of a process prunes it to three quarters of PLUME_KERNEL_CACHE_MAX_MB (default
 * JIT_DISK_DEFAULT_MAX_MB; 0: no limit) when it holds more, least recently used first (a load
 * sets its file's modification time), and removes temporary files older than an hour (a store
 * that was killed). A file removed while another process reads it is only compiled again.
 * Pruning stats every file of the folder (tens of thousands on a developer's machine, 50 ms
 * there and far longer on a network home), so it runs at most once an hour per folder, not
 * once per process: a farm starting a job per frame range would otherwise pay it every time.
 * The folder can exceed its limit by what is compiled in between.
 *
 * Threads: jit_disk_open / jit_disk_close on one thread while no other uses d; load and store
 * from any thread at once (d is read-only in between). */
#ifndef PLUME_ENGINE_CODEGEN_JIT_DISK_H
#define PLUME_ENGINE_CODEGEN_JIT_DISK_H

#include <stddef.h>
#include <stdint.h>

typedef struct jit_disk {
    char *dir;      /* owned; NULL: the cache is off */
    uint64_t ident; /* see the top of the file */
} jit_disk;

/* The folder a context uses when its caller names none: $PLUME_KERNEL_CACHE ("off" or empty:
 * none), else $XDG_CACHE_HOME/plume/kernels, else $HOME/.cache/plume/kernels. Returns a
 * malloc'd path or NULL (off, or no home). */
char *jit_disk_default_dir(void);

/* Turns the cache on in dir (made on first store), or leaves it off when dir is NULL or the
 * identity cannot be worked out (the binary cannot be read). cpu/features: what the code is
 * compiled for (the host's when NULL). Returns 1 when on. */
int jit_disk_open(jit_disk *d, const char *dir, const char *cpu, const char *features,
                  int opt_level, const void *runtime_bc, size_t runtime_bc_size);
void jit_disk_close(jit_disk *d);

uint64_t jit_disk_name(const jit_disk *d, uint64_t key, char *const *syms, int n_syms);

#define JIT_DISK_DEFAULT_MAX_MB 512

/* Removes the least recently used objects of dir until they take at most three quarters of
 * max_bytes, when they take more than max_bytes (0: no limit), and temporary files older than
 * an hour. Only this cache's file names are touched. Returns the bytes removed. Any thread;
 * other processes may use the folder meanwhile. */
uint64_t jit_disk_prune(const char *dir, uint64_t max_bytes);
/* 1 when the folder has not been pruned for an hour or more (by any process; the time of the
 * last prune is the modification time of JIT_DISK_STAMP in it), and marks it pruned now; 0
 * otherwise. 1 too when the mark cannot be read or written, or lies in the future. */
int jit_disk_prune_due(const char *dir);
#define JIT_DISK_STAMP ".last_prune"
/* PLUME_KERNEL_CACHE_MAX_MB in bytes, else the default; a value that is not a size in MiB
 * gives the default and a line on stderr saying so. */
uint64_t jit_disk_max_bytes(void);

/* 1 with the object's bytes (malloc'd; the caller frees) and its instruction count when a
 * whole file for `name` is there; 0 otherwise. */
int jit_disk_load(const jit_disk *d, uint64_t name, void **bytes, size_t *size,
                  uint64_t *instructions);
void jit_disk_store(const jit_disk *d, uint64_t name, const void *bytes, size_t size,
                    uint64_t instructions);

#endif
