/* jit.h — the CPU JIT: LLVM modules built by the caller, optimized and compiled on a pool of
 * compile threads, loaded into an ORC LLJIT, cached by the caller's 64-bit key.
 *
 * How a task becomes code. The caller submits a jit_request: a builder callback, a key (its
 * IR hash) and the names of the functions it wants. On a compile thread the JIT
 *   1. creates an empty module in that thread's own LLVMContext, with the target triple and
 *      data layout already set, and calls build(user, ctx, mod) to fill it through the LLVM-C
 *      builder API;
 *   2. verifies it (a broken module is an error naming the key, not a crash);
 *   3. links the runtime bitcode (jit_config.runtime_bc, e.g. the sparse runtime for x86_64)
 *      and makes every function except the requested ones internal, so the runtime inlines
 *      and what is not used disappears; target attributes baked into the runtime by clang are
 *      dropped so it is compiled for the host CPU like the rest;
 *   4. runs the new pass manager ("default<O3>") with a target machine for the host CPU and
 *      its features (AVX2 and wider where the machine has them) and counts the instructions;
 *   5. emits an object file with that thread's target machine, and adds it to the LLJIT under
 *      a mutex; the requested symbols are renamed "<name>.k<key>" first, so modules never
 *      clash, and their addresses are looked up.
 * Steps 1-5 up to the add run in parallel on the compile threads; only the add and lookup
 * (linking, cheap) are serialized. Emitting the object on our own threads, instead of handing
 * LLJIT an IR module, is deliberate: LLJIT without compile threads (the C API cannot set them)
 * compiles IR at lookup with one shared target machine, under our mutex: codegen would not
 * run in parallel.
 *
 * Disk. With jit_config.cache_dir, step 1-5's object is also written to that folder, and a
 * later JIT (another process) with the same key, symbols, CPU and build loads it instead of
 * steps 1-5 (jit_disk.h). The exported names are then "<name>.k<key>", the same in every
 * process; a key compiled again after a failure gets names with a sequence number and skips
 * the disk.
 *
 * Cache. Results are kept per key for the life of the JIT. A request whose key is compiled or
 * being compiled compiles nothing (a cache hit): it waits for that compile and returns its
 * addresses. The key stands for the module *and* its exported symbols: a hit may ask only for
 * symbols the first request of that key asked for. A key whose compile failed is compiled
 * again by the next request for it.
 *
 * Ownership. The JIT owns the compiled code: function addresses stay valid until
 * jit_destroy. The builder owns nothing it is handed: it must not keep the context or the
 * module after returning. Request data (symbol names) is copied at submit; the output arrays
 * (addrs, result) must stay valid until the task is waited on.
 *
 * Threads. jit_create / jit_destroy: the owning thread (the engine context's), with no task
 * in flight. jit_submit*, jit_wait*, jit_compile, jit_get_stats: any thread, concurrently.
 * Every submitted task must be waited on exactly once (jit_wait or jit_wait_all), by any
 * thread. build() runs on a compile thread, possibly at the same time as other builders: what
 * it reads through `user` must not change meanwhile. jit_emit_text runs on the calling thread
 * with a context of its own; any thread.
 *
 * Errors. Functions return 0 or -1 with one message in err (when err is not NULL) that names
 * the step and the key, e.g. "jit: key 0x2a: verifier: Terminator found in the middle of a
 * basic block". Nothing here aborts or exits. */
#ifndef PLUME_ENGINE_CODEGEN_JIT_H
#define PLUME_ENGINE_CODEGEN_JIT_H

#include <stddef.h>
#include <stdint.h>

#include <llvm-c/Core.h>

/* Fills `mod` (already created in `ctx`, triple and data layout set). Returns 0, or non-zero
 * with a message in err. */
typedef int (*jit_build_fn)(void *user, LLVMContextRef ctx, LLVMModuleRef mod, char *err,
                            size_t err_size);

typedef struct jit_config {
    int compile_threads;     /* 0 = one per CPU */
    int opt_level;           /* 0..3; jit_config_default gives 3 */
    const void *runtime_bc;  /* LLVM bitcode linked into every module; NULL = none. Read-only, */
    size_t runtime_bc_size;  /* must outlive the JIT (or the jit_emit_text call) */
    const char *cpu;         /* NULL = the host's CPU name and features */
    const char *features;
    /* Objects kept on disk between processes (jit_disk.h) in this folder; NULL = none. Only
     * for callers whose keys stand for their modules on their own (the engine's IR hashes). */
    const char *cache_dir;
} jit_config;

jit_config jit_config_default(void);

typedef struct jit_result {
    int cache_hit;         /* 1 when this request compiled nothing */
    double compile_s;      /* wall time of the compile that produced the code */
    uint64_t instructions; /* LLVM instructions after optimization in that compile */
} jit_result;

typedef struct jit_request {
    uint64_t key;
    jit_build_fn build;
    void *user;
    const char *const *symbols; /* functions to export and look up (defined by build) */
    int n_symbols;
    void **addrs;        /* out, n_symbols entries: written by the wait */
    jit_result *result;  /* out, optional */
} jit_request;

typedef struct jit_stats {
    uint64_t tasks_compiled;   /* modules compiled (cache misses that succeeded) */
    uint64_t tasks_from_disk;  /* ... of which loaded from cache_dir, not compiled */
    uint64_t compile_failures;
    uint64_t cache_hits;
    uint64_t instructions;     /* after optimization, summed over compiled modules */
    double compile_s;          /* wall time of compiles, summed over compile threads */
    int compile_threads;
} jit_stats;

typedef struct jit jit;
typedef struct jit_task jit_task;

int jit_create(const jit_config *cfg, jit **out, char *err, size_t err_size);
void jit_destroy(jit *j);

/* Queues one request and returns its handle (NULL on failure). A cache hit is queued too:
 * its wait returns at once or when the compile of its key ends. */
int jit_submit(jit *j, const jit_request *req, jit_task **out, char *err, size_t err_size);
/* Waits for the task, writes its addrs/result, frees the handle. */
int jit_wait(jit_task *t, char *err, size_t err_size);

/* Queues n requests at once (the compile threads take them in parallel). tasks[i] is the
 * handle of reqs[i]; on failure none is queued. */
int jit_submit_batch(jit *j, const jit_request *reqs, int n, jit_task **tasks, char *err,
                     size_t err_size);
/* Waits for all n tasks and frees them; returns -1 with the first failure's message if any
 * failed (the others' outputs are still written). */
int jit_wait_all(jit_task **tasks, int n, char *err, size_t err_size);

/* Drops every queued compile no thread has started: its key's entry fails with "cancelled"
 * (so its waiters return at once, with -1) and compiles afresh when next submitted. Compiles
 * under way finish. Returns how many were dropped. Any thread. */
int jit_cancel_queued(jit *j);

/* jit_submit + jit_wait. */
int jit_compile(jit *j, const jit_request *req, char *err, size_t err_size);

void jit_get_stats(jit *j, jit_stats *out);

/* ---- For a compiler driver (`plume compile --emit llvm|asm`) ------------------------------ */

typedef enum jit_emit_kind { JIT_EMIT_LLVM = 0, JIT_EMIT_ASM = 1 } jit_emit_kind;

/* Builds, links, internalizes (all but `symbols`; NULL = keep every external function the
 * builder defined) and optimizes one module as a compile thread would, then prints it as
 * LLVM IR or host assembly. *text is malloc'd: free() it. */
int jit_emit_text(const jit_config *cfg, jit_build_fn build, void *user,
                  const char *const *symbols, int n_symbols, jit_emit_kind kind, char **text,
                  char *err, size_t err_size);

#endif
