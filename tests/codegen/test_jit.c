/* The CPU JIT (engine/codegen/jit.h): modules from builder callbacks, the cache by key, compiles
 * from several threads at once, verifier errors reported as messages, the sparse runtime's
 * bitcode linked and inlined (checked against the native runtime), and text emission. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/codegen/jit.h"
#include "engine/codegen/jit_disk.h"
#include "sparse/bitcode.h"
#include "sparse/tree.h"
#include "tests/check.h"

/* ---- builders ---- */

typedef struct add_spec {
    const char *name; /* function defined: i64 name(i64 a) = a * mul + add */
    int64_t mul, add;
} add_spec;

static int build_add(void *user, LLVMContextRef ctx, LLVMModuleRef mod, char *err, size_t n)
{
    (void)err, (void)n;
    const add_spec *s = user;
    LLVMTypeRef i64 = LLVMInt64TypeInContext(ctx);
    LLVMTypeRef fty = LLVMFunctionType(i64, &i64, 1, 0);
    LLVMValueRef f = LLVMAddFunction(mod, s->name, fty);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, f, "entry"));
    LLVMValueRef v = LLVMBuildMul(b, LLVMGetParam(f, 0), LLVMConstInt(i64, (uint64_t)s->mul, 1),
                                  "m");
    v = LLVMBuildAdd(b, v, LLVMConstInt(i64, (uint64_t)s->add, 1), "a");
    LLVMBuildRet(b, v);
    LLVMDisposeBuilder(b);
    return 0;
}

/* A block without a terminator: the verifier must reject the module. */
static int build_broken(void *user, LLVMContextRef ctx, LLVMModuleRef mod, char *err, size_t n)
{
    (void)user, (void)err, (void)n;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
    LLVMValueRef f = LLVMAddFunction(mod, "broken", LLVMFunctionType(i32, NULL, 0, 0));
    LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, f, "entry"));
    LLVMBuildAdd(b, LLVMConstInt(i32, 1, 0), LLVMConstInt(i32, 2, 0), "x");
    LLVMDisposeBuilder(b);
    return 0;
}

static int build_fails(void *user, LLVMContextRef ctx, LLVMModuleRef mod, char *err, size_t n)
{
    (void)user, (void)ctx, (void)mod;
    snprintf(err, n, "no such kernel 'zzz'");
    return 1;
}

/* int32_t cidx(plm_runtime *rt, i32 snode, i32 x, i32 y, i32 z): a call to the runtime. */
static int build_cell_index(void *user, LLVMContextRef ctx, LLVMModuleRef mod, char *err,
                            size_t n)
{
    (void)user, (void)err, (void)n;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
    LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0);
    LLVMTypeRef params[5] = {ptr, i32, i32, i32, i32};
    LLVMTypeRef fty = LLVMFunctionType(i32, params, 5, 0);
    LLVMValueRef rtf = LLVMAddFunction(mod, "plm_rt_cell_index", fty);
    LLVMValueRef f = LLVMAddFunction(mod, "cidx", fty);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, f, "entry"));
    LLVMValueRef args[5];
    for (int i = 0; i < 5; i++)
        args[i] = LLVMGetParam(f, (unsigned)i);
    LLVMBuildRet(b, LLVMBuildCall2(b, fty, rtf, args, 5, "c"));
    LLVMDisposeBuilder(b);
    return 0;
}

typedef int64_t (*add_fn)(int64_t);

/* build_add, counting its calls */
static int build_count;
static int build_add_counted(void *user, LLVMContextRef ctx, LLVMModuleRef mod, char *err,
                             size_t n)
{
    build_count++;
    return build_add(user, ctx, mod, err, n);
}

/* ---- tests ---- */

static void test_compile_and_cache(void)
{
    jit_config cfg = jit_config_default();
    cfg.compile_threads = 2;
    jit *j = NULL;
    char err[1024];
    CHECK_MSG(jit_create(&cfg, &j, err, sizeof err) == 0, err);
    if (!j)
        return;

    add_spec s = {"affine", 3, 7};
    const char *sym[1] = {"affine"};
    void *addr[1] = {NULL};
    jit_result res;
    jit_request r = {0x2a, build_add, &s, sym, 1, addr, &res};
    CHECK_MSG(jit_compile(j, &r, err, sizeof err) == 0, err);
    CHECK(addr[0] != NULL);
    CHECK_EQ(res.cache_hit, 0);
    CHECK(res.instructions > 0);
    if (addr[0])
        CHECK_EQ(((add_fn)addr[0])(5), 22);

    /* Same key, different builder input: the cache must answer without rebuilding, so the old
     * code (3x + 7) comes back. */
    add_spec other = {"affine", 100, 0};
    void *addr2[1] = {NULL};
    r.user = &other;
    r.addrs = addr2;
    CHECK_MSG(jit_compile(j, &r, err, sizeof err) == 0, err);
    CHECK_EQ(res.cache_hit, 1);
    CHECK(addr2[0] == addr[0]);
    if (addr2[0])
        CHECK_EQ(((add_fn)addr2[0])(-1), 4);

    /* A cache hit may not ask for a symbol its key never exported. */
    const char *sym_other[1] = {"nope"};
    r.symbols = sym_other;
    CHECK(jit_compile(j, &r, err, sizeof err) != 0);
    CHECK(strstr(err, "nope") != NULL);

    /* Another key with the same function name lives beside the first. */
    void *addr3[1] = {NULL};
    jit_request r3 = {0x2b, build_add, &other, sym, 1, addr3, NULL};
    CHECK_MSG(jit_compile(j, &r3, err, sizeof err) == 0, err);
    CHECK(addr3[0] != addr[0]);
    if (addr3[0])
        CHECK_EQ(((add_fn)addr3[0])(2), 200);
    if (addr[0])
        CHECK_EQ(((add_fn)addr[0])(2), 13);

    jit_stats st;
    jit_get_stats(j, &st);
    CHECK_EQ(st.tasks_compiled, 2);
    CHECK_EQ(st.cache_hits, 2);
    CHECK_EQ(st.compile_threads, 2);
    jit_destroy(j);
}

static void test_errors(void)
{
    jit *j = NULL;
    char err[1024] = "";
    jit_config cfg = jit_config_default();
    cfg.compile_threads = 1;
    CHECK_MSG(jit_create(&cfg, &j, err, sizeof err) == 0, err);
    if (!j)
        return;
    const char *sym[1] = {"broken"};
    void *addr[1];
    jit_request r = {0x77, build_broken, NULL, sym, 1, addr, NULL};
    CHECK(jit_compile(j, &r, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "verifier") != NULL, err);
    CHECK_MSG(strstr(err, "0x77") != NULL, err);

    r.key = 0x78;
    r.build = build_fails;
    CHECK(jit_compile(j, &r, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "no such kernel 'zzz'") != NULL, err);

    /* A symbol the builder never defined. */
    add_spec s = {"defined", 1, 0};
    const char *missing[1] = {"undefined_fn"};
    jit_request r2 = {0x79, build_add, &s, missing, 1, addr, NULL};
    CHECK(jit_compile(j, &r2, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "undefined_fn") != NULL, err);

    /* A failed key compiles again on the next request, and the JIT is still usable. */
    const char *sym_ok[1] = {"defined"};
    r2.symbols = sym_ok;
    CHECK_MSG(jit_compile(j, &r2, err, sizeof err) == 0, err);
    if (addr[0])
        CHECK_EQ(((add_fn)addr[0])(9), 9);

    jit_stats st;
    jit_get_stats(j, &st);
    CHECK_EQ(st.compile_failures, 3);
    CHECK_EQ(st.tasks_compiled, 1);

    /* Bad arguments are errors, not crashes. */
    CHECK(jit_compile(j, NULL, err, sizeof err) != 0);
    jit_request bad = {1, NULL, NULL, NULL, 0, NULL, NULL};
    CHECK(jit_compile(j, &bad, err, sizeof err) != 0);
    jit_destroy(j);
}

/* Several threads submit batches at once; some keys are shared between threads, so the cache
 * is hit while those keys are still compiling. */
enum { N_THREADS = 4, N_KEYS = 6 };

typedef struct thread_arg {
    jit *j;
    int t;
    int ok;
} thread_arg;

static void *submit_thread(void *p)
{
    thread_arg *a = p;
    add_spec specs[N_KEYS];
    const char *sym[1] = {"f"};
    void *addrs[N_KEYS][1];
    jit_request reqs[N_KEYS];
    jit_task *tasks[N_KEYS];
    for (int k = 0; k < N_KEYS; k++) {
        /* keys below 2 are shared by every thread (same function), the others are private */
        int shared = k < 2;
        uint64_t key = shared ? (uint64_t)k + 1000 : (uint64_t)(a->t * 100 + k);
        specs[k] = (add_spec){"f", shared ? 2 : a->t + 3, shared ? k : k * 10};
        reqs[k] = (jit_request){key, build_add, &specs[k], sym, 1, addrs[k], NULL};
    }
    char err[1024];
    a->ok = 1;
    if (jit_submit_batch(a->j, reqs, N_KEYS, tasks, err, sizeof err) != 0 ||
        jit_wait_all(tasks, N_KEYS, err, sizeof err) != 0) {
        fprintf(stderr, "thread %d: %s\n", a->t, err);
        a->ok = 0;
        return NULL;
    }
    for (int k = 0; k < N_KEYS; k++) {
        int64_t want = k < 2 ? 2 * 11 + k : (a->t + 3) * 11 + k * 10;
        if (!addrs[k][0] || ((add_fn)addrs[k][0])(11) != want) {
            fprintf(stderr, "thread %d key %d: wrong code\n", a->t, k);
            a->ok = 0;
        }
    }
    return NULL;
}

static void test_threads(void)
{
    jit *j = NULL;
    char err[1024];
    jit_config cfg = jit_config_default();
    cfg.compile_threads = 3;
    cfg.opt_level = 1;
    CHECK_MSG(jit_create(&cfg, &j, err, sizeof err) == 0, err);
    if (!j)
        return;
    pthread_t th[N_THREADS];
    thread_arg args[N_THREADS];
    for (int t = 0; t < N_THREADS; t++) {
        args[t] = (thread_arg){j, t, 0};
        CHECK(pthread_create(&th[t], NULL, submit_thread, &args[t]) == 0);
    }
    for (int t = 0; t < N_THREADS; t++) {
        pthread_join(th[t], NULL);
        CHECK(args[t].ok);
    }
    jit_stats st;
    jit_get_stats(j, &st);
    /* 2 shared keys + 4 private per thread; every other request was a hit */
    CHECK_EQ(st.tasks_compiled, 2 + N_THREADS * (N_KEYS - 2));
    CHECK_EQ(st.cache_hits, (N_THREADS - 1) * 2);
    CHECK_EQ(st.compile_failures, 0);
    jit_destroy(j);
}

typedef int32_t (*cidx_fn)(plm_runtime *, int32_t, int32_t, int32_t, int32_t);

static void test_runtime_linked(void)
{
    char err[1024];
    plm_tree *tree = NULL;
    CHECK_MSG(plm_tree_create(PLM_LAYOUT_DEFAULT ".place(d)", 64u << 20, &tree, err,
                              sizeof err) == 0,
              err);
    if (!tree)
        return;
    plm_runtime *rt = plm_tree_runtime(tree);

    jit_config cfg = jit_config_default();
    cfg.compile_threads = 1;
    cfg.runtime_bc = plm_runtime_bc_x86_64;
    cfg.runtime_bc_size = plm_runtime_bc_x86_64_size;
    jit *j = NULL;
    CHECK_MSG(jit_create(&cfg, &j, err, sizeof err) == 0, err);
    const char *sym[1] = {"cidx"};
    void *addr[1] = {NULL};
    jit_request r = {0x1234, build_cell_index, NULL, sym, 1, addr, NULL};
    if (j)
        CHECK_MSG(jit_compile(j, &r, err, sizeof err) == 0, err);
    if (addr[0]) {
        cidx_fn f = (cidx_fn)addr[0];
        static const int32_t coords[][3] = {
            {0, 0, 0}, {-2048, -2048, -2048}, {2047, 2047, 2047}, {-1, 5, 300},
            {2048, 0, 0}, {-2049, 0, 0}, {17, -33, 1000}, {7, 8, 9},
        };
        int mismatches = 0;
        for (int32_t s = 1; s < rt->num_snodes; s++)
            for (size_t c = 0; c < sizeof coords / sizeof coords[0]; c++) {
                int32_t want = plm_rt_cell_index(rt, s, coords[c][0], coords[c][1], coords[c][2]);
                int32_t got = f(rt, s, coords[c][0], coords[c][1], coords[c][2]);
                mismatches += want != got;
            }
        CHECK_EQ(mismatches, 0);
        /* the formula itself, for dense(ijk,8): x*64 + y*8 + z of the voxel inside its block */
        CHECK_EQ(f(rt, 3, 7 - 2048, 11 - 2048, 10 - 2048), 7 * 64 + 3 * 8 + 2);
        CHECK_EQ(f(rt, 3, 4096, 0, 0), -1);
    }
    jit_destroy(j);

    /* Inlined: the optimized module calls nothing and defines only the kept function. */
    char *text = NULL;
    CHECK_MSG(jit_emit_text(&cfg, build_cell_index, NULL, sym, 1, JIT_EMIT_LLVM, &text, err,
                            sizeof err) == 0,
              err);
    if (text) {
        CHECK_MSG(strstr(text, "call ") == NULL, "plm_rt_cell_index was not inlined");
        CHECK(strstr(text, "define i32 @cidx(") != NULL);
        CHECK(strstr(text, "define internal") == NULL && strstr(text, "@plm_rt_access") == NULL);
        free(text);
    }
    plm_tree_destroy(tree);
}

static void test_emit_text(void)
{
    char err[1024];
    add_spec s = {"emitted_fn", 5, 1};
    char *text = NULL;
    CHECK_MSG(jit_emit_text(NULL, build_add, &s, NULL, 0, JIT_EMIT_LLVM, &text, err,
                            sizeof err) == 0,
              err);
    if (text) {
        CHECK(strstr(text, "define i64 @emitted_fn(i64") != NULL);
        CHECK(strstr(text, "mul i64") != NULL || strstr(text, "mul nsw i64") != NULL ||
              strstr(text, "shl") != NULL);
        free(text);
    }
    text = NULL;
    CHECK_MSG(jit_emit_text(NULL, build_add, &s, NULL, 0, JIT_EMIT_ASM, &text, err,
                            sizeof err) == 0,
              err);
    if (text) {
        CHECK(strstr(text, "emitted_fn:") != NULL);
        CHECK(strstr(text, "ret") != NULL);
        CHECK(strstr(text, "lea") != NULL || strstr(text, "imul") != NULL);
        free(text);
    }
    text = NULL;
    CHECK(jit_emit_text(NULL, build_broken, NULL, NULL, 0, JIT_EMIT_ASM, &text, err,
                        sizeof err) != 0);
    CHECK_MSG(strstr(err, "verifier") != NULL, err);
    CHECK(text == NULL);
}

/* One compile of key 0x51 in a fresh JIT on `dir` (features: NULL = the host's); *value is
 * the compiled function at 5, *disk whether the JIT loaded it from disk. */
static void disk_round(const char *dir, const char *features, const add_spec *s,
                       int64_t *value, uint64_t *disk)
{
    jit_config cfg = jit_config_default();
    cfg.compile_threads = 1;
    cfg.cache_dir = dir;
    cfg.features = features;
    jit *j = NULL;
    char err[1024];
    *value = 0;
    *disk = 99;
    CHECK_MSG(jit_create(&cfg, &j, err, sizeof err) == 0, err);
    if (!j)
        return;
    const char *sym[1] = {s->name};
    void *addr[1] = {NULL};
    jit_result res;
    jit_request r = {0x51, build_add_counted, (void *)s, sym, 1, addr, &res};
    CHECK_MSG(jit_compile(j, &r, err, sizeof err) == 0, err);
    if (addr[0])
        *value = ((add_fn)addr[0])(5);
    CHECK(res.instructions > 0);
    jit_stats st;
    jit_get_stats(j, &st);
    CHECK_EQ(st.tasks_compiled, 1);
    *disk = st.tasks_from_disk;
    jit_destroy(j);
}

/* Objects on disk (jit_config.cache_dir, jit_disk.h): a second JIT (as another process would)
 * loads what the first compiled, without calling the builder; the key alone decides, so
 * different builder input is not seen (the caller's contract); a damaged file or other CPU
 * features compile again. */
static void test_disk_cache(void)
{
    char dir[] = "/tmp/plume-jit-disk-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    char sub[64];
    snprintf(sub, sizeof sub, "%s/a/b", dir); /* made on first store */
    add_spec s = {"affine", 3, 7}, other = {"affine", 100, 0};
    int64_t v;
    uint64_t disk;
    build_count = 0;
    disk_round(sub, NULL, &s, &v, &disk);
    CHECK_EQ(v, 22);
    CHECK_EQ(disk, 0);
    CHECK_EQ(build_count, 1);

    disk_round(sub, NULL, &other, &v, &disk);
    CHECK_EQ(v, 22); /* the stored 3x + 7, not 100x */
    CHECK_EQ(disk, 1);
    CHECK_EQ(build_count, 1);

    /* truncate every stored file: each is refused and compiled again (then stored whole) */
    char cmd[200];
    snprintf(cmd, sizeof cmd, "for f in %s/*.o; do truncate -s 100 \"$f\"; done", sub);
    CHECK_EQ(system(cmd), 0);
    disk_round(sub, NULL, &other, &v, &disk);
    CHECK_EQ(v, 500);
    CHECK_EQ(disk, 0);
    CHECK_EQ(build_count, 2);
    disk_round(sub, NULL, &s, &v, &disk);
    CHECK_EQ(v, 500); /* the rewritten file */
    CHECK_EQ(disk, 1);

    /* other CPU features: another name, so a compile */
    disk_round(sub, "+sse2", &s, &v, &disk);
    CHECK_EQ(v, 22);
    CHECK_EQ(disk, 0);
    CHECK_EQ(build_count, 3);

    /* a load marks its file as used: an old modification time becomes recent */
    snprintf(cmd, sizeof cmd, "touch -d 2001-01-01 %s/*.o", sub);
    CHECK_EQ(system(cmd), 0);
    disk_round(sub, NULL, &s, &v, &disk);
    CHECK_EQ(disk, 1);
    snprintf(cmd, sizeof cmd, "test -n \"$(find %s -name '*.o' -newermt 2020-01-01)\"", sub);
    CHECK_EQ(system(cmd), 0);

    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_EQ(system(cmd), 0);
}

/* A file of `mib` MiB (apparent size) last modified `age` seconds ago. */
static void aged_file(const char *dir, const char *name, int mib, long age)
{
    char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f)
        return;
    CHECK_EQ(ftruncate(fileno(f), (off_t)mib << 20), 0);
    fclose(f);
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= age;
    t[1] = t[0];
    CHECK_EQ(utimensat(AT_FDCWD, path, t, 0), 0);
}

static int exists(const char *dir, const char *name)
{
    char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* Pruning (jit_disk_prune): over the limit, the least recently used objects go until three
 * quarters of it remain; files the cache did not write stay, and so do recent temporaries. */
static void test_disk_prune(void)
{
    char dir[] = "/tmp/plume-jit-prune-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    char name[32];
    for (int i = 0; i < 8; i++) { /* object i used 100 * (8 - i) seconds ago: 0 the oldest */
        snprintf(name, sizeof name, "%016x.o", 0xa0 + i);
        aged_file(dir, name, 1, 100L * (8 - i));
    }
    aged_file(dir, "notes.txt", 16, 100000);                /* not the cache's */
    aged_file(dir, ".00000000000000a0.Xy12Zq", 1, 7200);     /* a store killed 2 hours ago */
    aged_file(dir, ".00000000000000a1.Xy12Zq", 1, 10);       /* a store under way */
    CHECK_EQ(jit_disk_prune(dir, 64u << 20), (uint64_t)1 << 20); /* under the limit: the old temporary only */
    CHECK(!exists(dir, ".00000000000000a0.Xy12Zq"));
    CHECK(exists(dir, ".00000000000000a1.Xy12Zq"));
    /* 8 MiB of objects against 4: down to 3, the five oldest removed */
    CHECK_EQ(jit_disk_prune(dir, 4u << 20), (uint64_t)5 << 20);
    for (int i = 0; i < 8; i++) {
        snprintf(name, sizeof name, "%016x.o", 0xa0 + i);
        CHECK_EQ(exists(dir, name), i >= 5);
    }
    CHECK(exists(dir, "notes.txt"));
    CHECK_EQ(jit_disk_prune(dir, 0), 0); /* no limit */
    CHECK(exists(dir, "notes.txt")); /* the stamp below is not an object either */

    /* At most once an hour per folder: due with no stamp, and that call stamps it; not due
     * again until the stamp is an hour old; a stamp from the future (a clock set back) does
     * not stop pruning for good. */
    CHECK_EQ(jit_disk_prune_due(dir), 1);
    CHECK(exists(dir, JIT_DISK_STAMP));
    CHECK_EQ(jit_disk_prune_due(dir), 0);
    aged_file(dir, JIT_DISK_STAMP, 0, 3500);
    CHECK_EQ(jit_disk_prune_due(dir), 0);
    aged_file(dir, JIT_DISK_STAMP, 0, 3700);
    CHECK_EQ(jit_disk_prune_due(dir), 1);
    CHECK_EQ(jit_disk_prune_due(dir), 0);
    aged_file(dir, JIT_DISK_STAMP, 0, -7200);
    CHECK_EQ(jit_disk_prune_due(dir), 1);
    CHECK_EQ(jit_disk_prune(dir, 2u << 20), (uint64_t)2 << 20); /* objects 5, 6 go */
    CHECK(exists(dir, JIT_DISK_STAMP)); /* a prune leaves the stamp */

    setenv("PLUME_KERNEL_CACHE_MAX_MB", "0", 1);
    CHECK_EQ(jit_disk_max_bytes(), 0);
    setenv("PLUME_KERNEL_CACHE_MAX_MB", "64", 1);
    CHECK_EQ(jit_disk_max_bytes(), (uint64_t)64 << 20);
    setenv("PLUME_KERNEL_CACHE_MAX_MB", "lots", 1);
    CHECK_EQ(jit_disk_max_bytes(), (uint64_t)JIT_DISK_DEFAULT_MAX_MB << 20);
    /* negative (strtoull would wrap it) and too large to shift into bytes: the default too */
    setenv("PLUME_KERNEL_CACHE_MAX_MB", "-5", 1);
    CHECK_EQ(jit_disk_max_bytes(), (uint64_t)JIT_DISK_DEFAULT_MAX_MB << 20);
    setenv("PLUME_KERNEL_CACHE_MAX_MB", "18446744073709551615", 1);
    CHECK_EQ(jit_disk_max_bytes(), (uint64_t)JIT_DISK_DEFAULT_MAX_MB << 20);
    unsetenv("PLUME_KERNEL_CACHE_MAX_MB");

    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_EQ(system(cmd), 0);
}

int main(void)
{
    test_compile_and_cache();
    test_disk_cache();
    test_disk_prune();
    test_errors();
    test_threads();
    test_runtime_linked();
    test_emit_text();
    CHECK_DONE();
}
