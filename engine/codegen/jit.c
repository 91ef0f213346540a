/* The CPU JIT: the cache by key, the compile threads and their queue, and the LLJIT. */
#define _GNU_SOURCE
#include "engine/codegen/jit.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/Error.h>
#include <llvm-c/ExecutionEngine.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/OrcEE.h>
#include <llvm-c/Orc.h>

#include "engine/codegen/jit_disk.h"
#include "engine/codegen/toolchain.h"

enum { ENTRY_PENDING, ENTRY_READY, ENTRY_FAILED };

/* One key's compile. Written by the compiling thread under jit.lock; read by waiters once
 * state is no longer PENDING. */
typedef struct entry {
    uint64_t key;
    int state;
    int attempts;   /* compiles queued for this key */
    int n;          /* exported symbols */
    char **names;   /* as requested */
    void **addrs;
    uint64_t instructions;
    double compile_s;
    char *error;    /* FAILED: the message */
} entry;

struct jit_task {
    jit *j;
    entry *e;
    int hit;
    jit_build_fn build;
    void *user;
    char **syms;
    int n_syms;
    void **addrs;
    jit_result *result;
    jit_task *next; /* queue link */
};

typedef struct worker {
    jit *j;
    int index;
    cg_toolchain tc;
    pthread_t thread;
    int started;
} worker;

struct jit {
    jit_config cfg;
    LLVMOrcLLJITRef lljit;
    LLVMOrcJITDylibRef dylib;
    pthread_mutex_t lljit_lock; /* LLJIT add + lookup */
    jit_disk disk;              /* read-only after jit_create */

    pthread_mutex_t lock; /* everything below */
    pthread_cond_t work;  /* the queue got a task, or stop */
    pthread_cond_t done;  /* an entry left PENDING */
    jit_task *head, *tail;
    int stop;
    entry **table; /* open addressing by key; NULL = empty */
    size_t table_cap, table_used;
    uint64_t seq; /* makes exported names unique across compiles */
    jit_stats stats;

    worker *workers;
    int n_workers;
};

jit_config jit_config_default(void)
{
    jit_config c;
    memset(&c, 0, sizeof c);
    c.opt_level = 3;
    return c;
}

/* ---- the cache table ---- */

static size_t slot_of(uint64_t key, size_t cap)
{
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & (cap - 1);
}

static entry *table_find(jit *j, uint64_t key)
{
    if (!j->table_cap)
        return NULL;
    for (size_t i = slot_of(key, j->table_cap);; i = (i + 1) & (j->table_cap - 1)) {
        entry *e = j->table[i];
        if (!e || e->key == key)
            return e;
    }
}

static int table_insert(jit *j, entry *e)
{
    if ((j->table_used + 1) * 2 > j->table_cap) {
        size_t cap = j->table_cap ? j->table_cap * 2 : 64;
        entry **t = calloc(cap, sizeof *t);
        if (!t)
            return -1;
        for (size_t i = 0; i < j->table_cap; i++) {
            entry *old = j->table[i];
            if (!old)
                continue;
            size_t s = slot_of(old->key, cap);
            while (t[s])
                s = (s + 1) & (cap - 1);
            t[s] = old;
        }
        free(j->table);
        j->table = t;
        j->table_cap = cap;
    }
    size_t s = slot_of(e->key, j->table_cap);
    while (j->table[s])
        s = (s + 1) & (j->table_cap - 1);
    j->table[s] = e;
    j->table_used++;
    return 0;
}

static void entry_clear(entry *e)
{
    for (int i = 0; i < e->n; i++)
        free(e->names[i]);
    free(e->names);
    free(e->addrs);
    free(e->error);
    e->names = NULL;
    e->addrs = NULL;
    e->error = NULL;
    e->n = 0;
}

/* ---- compiling one task on a worker ---- */

static char *error_from(LLVMErrorRef e)
{
    char *m = LLVMGetErrorMessage(e);
    char *copy = strdup(m ? m : "unknown error");
    LLVMDisposeErrorMessage(m);
    return copy;
}

/* Adds the object to the LLJIT and looks the names up (under the LLJIT lock). Takes obj. */
static int load_object(jit *j, LLVMMemoryBufferRef obj, const jit_task *t, char **unique,
                       void **addrs, const char *name, char *err, size_t err_size)
{
    int rc = 0;
    pthread_mutex_lock(&j->lljit_lock);
    LLVMErrorRef e = LLVMOrcLLJITAddObjectFile(j->lljit, j->dylib, obj); /* takes obj */
    if (e) {
        char *why = error_from(e);
        cg_set_err(err, err_size, "%s: adding the object to LLJIT: %s", name, why);
        free(why);
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < t->n_syms; i++) {
        LLVMOrcExecutorAddress a = 0;
        e = unique[i] ? LLVMOrcLLJITLookup(j->lljit, &a, unique[i]) : NULL;
        if (e || !unique[i]) {
            char *why = e ? error_from(e) : strdup("out of memory");
            cg_set_err(err, err_size, "%s: looking up '%s': %s", name, t->syms[i], why);
            free(why);
            rc = -1;
        }
        addrs[i] = (void *)(uintptr_t)a;
    }
    pthread_mutex_unlock(&j->lljit_lock);
    return rc;
}

/* The exported names: "<sym>.k<key>" where they must match a file on disk, else with the
 * compile's sequence number too, so every compile's symbols can live in one JITDylib. */
static char **unique_names(const jit_task *t, int for_disk, uint64_t seq)
{
    char **u = calloc((size_t)t->n_syms + 1, sizeof *u);
    for (int i = 0; u && i < t->n_syms; i++) {
        int n = for_disk ? asprintf(&u[i], "%s.k%" PRIx64, t->syms[i], t->e->key)
                         : asprintf(&u[i], "%s.k%" PRIx64 ".%" PRIu64, t->syms[i], t->e->key, seq);
        if (n < 0)
            u[i] = NULL;
    }
    return u;
}

static void free_names(char **u, int n)
{
    for (int i = 0; u && i < n; i++)
        free(u[i]);
    free(u);
}

/* The task's object from disk, loaded: 1 when that worked, 0 when there is no such file, -1
 * when a file checked out but LLJIT refused it (its names may be defined now, so the compile
 * that follows uses numbered names). */
static int from_disk(jit *j, jit_task *t, uint64_t dname, char **unique, void **addrs,
                     uint64_t *instructions, const char *name)
{
    void *bytes;
    size_t size;
    if (!jit_disk_load(&j->disk, dname, &bytes, &size, instructions))
        return 0;
    LLVMMemoryBufferRef obj = LLVMCreateMemoryBufferWithMemoryRangeCopy(bytes, size, name);
    free(bytes);
    char msg[256];
    return obj && load_object(j, obj, t, unique, addrs, name, msg, sizeof msg) == 0 ? 1 : -1;
}

/* Builds, optimizes, emits and loads the task's module (or loads it from disk); fills addrs.
 * *disk_hit says which. */
static int compile_task(worker *w, jit_task *t, uint64_t seq, void **addrs,
                        uint64_t *instructions, int *disk_hit, char *err, size_t err_size)
{
    jit *j = w->j;
    char name[64];
    snprintf(name, sizeof name, "jit key 0x%" PRIx64, t->e->key);
    *disk_hit = 0;
    int disk = j->disk.dir && t->e->attempts == 1;
    uint64_t dname = disk ? jit_disk_name(&j->disk, t->e->key, t->syms, t->n_syms) : 0;
    char **unique = unique_names(t, disk, seq);
    if (!unique) {
        cg_set_err(err, err_size, "%s: out of memory", name);
        return -1;
    }
    int got = disk ? from_disk(j, t, dname, unique, addrs, instructions, name) : 0;
    if (got > 0) {
        *disk_hit = 1;
        free_names(unique, t->n_syms);
        return 0;
    }
    if (got < 0) {
        free_names(unique, t->n_syms);
        disk = 0;
        if (!(unique = unique_names(t, 0, seq))) {
            cg_set_err(err, err_size, "%s: out of memory", name);
            return -1;
        }
    }
    LLVMModuleRef m;
    int rc = cg_build_module(&w->tc, name, t->build, t->user, (const char *const *)t->syms,
                             t->n_syms, &m, instructions, err, err_size);
    if (rc != 0)
        goto out;
    for (int i = 0; i < t->n_syms; i++) {
        LLVMValueRef f = LLVMGetNamedFunction(m, t->syms[i]);
        if (unique[i] && f)
            LLVMSetValueName2(f, unique[i], strlen(unique[i]));
    }
    LLVMMemoryBufferRef obj;
    char msg[512];
    rc = cg_emit(&w->tc, m, LLVMObjectFile, &obj, msg, sizeof msg);
    LLVMDisposeModule(m);
    if (rc != 0) {
        cg_set_err(err, err_size, "%s: %s", name, msg);
        goto out;
    }
    if (disk)
        jit_disk_store(&j->disk, dname, LLVMGetBufferStart(obj), LLVMGetBufferSize(obj),
                       *instructions);
    rc = load_object(j, obj, t, unique, addrs, name, err, err_size);
out:
    free_names(unique, t->n_syms);
    return rc;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    jit *j = w->j;
    pthread_mutex_lock(&j->lock);
    for (;;) {
        while (!j->stop && !j->head)
            pthread_cond_wait(&j->work, &j->lock);
        if (j->stop)
            break;
        jit_task *t = j->head;
        j->head = t->next;
        if (!j->head)
            j->tail = NULL;
        uint64_t seq = j->seq++;
        pthread_mutex_unlock(&j->lock);

        char err[1024] = "";
        uint64_t instructions = 0;
        void **addrs = calloc((size_t)t->n_syms + 1, sizeof *addrs);
        char **names = calloc((size_t)t->n_syms + 1, sizeof *names);
        double t0 = cg_now();
        int rc = -1, disk_hit = 0;
        if (!addrs || !names)
            cg_set_err(err, sizeof err, "jit key 0x%" PRIx64 ": out of memory", t->e->key);
        else
            rc = compile_task(w, t, seq, addrs, &instructions, &disk_hit, err, sizeof err);
        double dt = cg_now() - t0;
        for (int i = 0; rc == 0 && i < t->n_syms; i++) {
            names[i] = strdup(t->syms[i]);
            if (!names[i]) {
                cg_set_err(err, sizeof err, "jit key 0x%" PRIx64 ": out of memory", t->e->key);
                rc = -1;
            }
        }

        pthread_mutex_lock(&j->lock);
        entry *e = t->e; /* t belongs to its waiter from the moment state changes */
        e->instructions = instructions;
        e->compile_s = dt;
        j->stats.compile_s += dt;
        if (rc == 0) {
            e->names = names;
            e->addrs = addrs;
            e->n = t->n_syms;
            e->state = ENTRY_READY;
            j->stats.tasks_compiled++;
            j->stats.tasks_from_disk += (uint64_t)disk_hit;
            j->stats.instructions += instructions;
        } else {
            for (int i = 0; names && i < t->n_syms; i++)
                free(names[i]);
            free(names);
            free(addrs);
            e->error = strdup(err);
            e->state = ENTRY_FAILED;
            j->stats.compile_failures++;
        }
        pthread_cond_broadcast(&j->done);
    }
    pthread_mutex_unlock(&j->lock);
    return NULL;
}

/* ---- creation ---- */

/* PLUME_PERF=1: tasks are announced to perf (`perf record -k 1`, then `perf inject --jit`),
 * which needs the RTDyld object layer that the perf listener plugs into; profiling only. */
static LLVMOrcObjectLayerRef perf_layer(void *ctx, LLVMOrcExecutionSessionRef es,
                                        const char *triple)
{
    (void)ctx;
    (void)triple;
    LLVMOrcObjectLayerRef l = LLVMOrcCreateRTDyldObjectLinkingLayerWithSectionMemoryManager(es);
    LLVMJITEventListenerRef p = LLVMCreatePerfJITEventListener();
    if (p)
        LLVMOrcRTDyldObjectLinkingLayerRegisterJITEventListener(l, p);
    else
        fprintf(stderr, "plume: PLUME_PERF: this LLVM has no perf listener\n");
    return l;
}

int jit_create(const jit_config *cfg, jit **out, char *err, size_t err_size)
{
    if (!out) {
        cg_set_err(err, err_size, "jit_create: out is NULL");
        return -1;
    }
    *out = NULL;
    jit_config c = cfg ? *cfg : jit_config_default();
    if (c.compile_threads < 0 || c.compile_threads > 256 || c.opt_level < 0 ||
        c.opt_level > 3) {
        cg_set_err(err, err_size, "jit_create: bad config (compile_threads %d, opt_level %d)",
                   c.compile_threads, c.opt_level);
        return -1;
    }
    if (c.compile_threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        c.compile_threads = n > 0 ? (int)(n < 64 ? n : 64) : 1;
    }
    cg_init_llvm();

    jit *j = calloc(1, sizeof *j);
    if (!j) {
        cg_set_err(err, err_size, "jit_create: out of memory");
        return -1;
    }
    j->cfg = c;
    j->cfg.cache_dir = NULL; /* not kept: the disk copies it */
    jit_disk_open(&j->disk, c.cache_dir, c.cpu, c.features, c.opt_level, c.runtime_bc,
                  c.runtime_bc_size);
    pthread_mutex_init(&j->lljit_lock, NULL);
    pthread_mutex_init(&j->lock, NULL);
    pthread_cond_init(&j->work, NULL);
    pthread_cond_init(&j->done, NULL);
    j->stats.compile_threads = c.compile_threads;

    LLVMOrcLLJITBuilderRef b = LLVMOrcCreateLLJITBuilder();
    const char *perf = getenv("PLUME_PERF");
    if (perf && *perf && strcmp(perf, "0") != 0)
        LLVMOrcLLJITBuilderSetObjectLinkingLayerCreator(b, perf_layer, NULL);
    LLVMErrorRef e = LLVMOrcCreateLLJIT(&j->lljit, b); /* takes b */
    if (e) {
        char *why = error_from(e);
        cg_set_err(err, err_size, "jit_create: LLJIT: %s", why);
        free(why);
        j->lljit = NULL;
        jit_destroy(j);
        return -1;
    }
    j->dylib = LLVMOrcLLJITGetMainJITDylib(j->lljit);
    /* Kernels may call libc and libm (memset, expf...): resolve them in the process. */
    LLVMOrcDefinitionGeneratorRef gen;
    e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
        &gen, LLVMOrcLLJITGetGlobalPrefix(j->lljit), NULL, NULL);
    if (e) {
        char *why = error_from(e);
        cg_set_err(err, err_size, "jit_create: process symbols: %s", why);
        free(why);
        jit_destroy(j);
        return -1;
    }
    LLVMOrcJITDylibAddGenerator(j->dylib, gen);
    if (cg_jit_define_libm(j->lljit, j->dylib, err, err_size) != 0) {
        jit_destroy(j);
        return -1;
    }

    j->workers = calloc((size_t)c.compile_threads, sizeof *j->workers);
    if (!j->workers) {
        cg_set_err(err, err_size, "jit_create: out of memory");
        jit_destroy(j);
        return -1;
    }
    cg_target t = {CG_HOST, c.cpu, c.features, c.opt_level, c.runtime_bc, c.runtime_bc_size, NULL};
    for (int i = 0; i < c.compile_threads; i++) {
        worker *w = &j->workers[i];
        w->j = j;
        w->index = i;
        if (cg_toolchain_init(&w->tc, &t, err, err_size) != 0) {
            jit_destroy(j);
            return -1;
        }
        j->n_workers++;
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            cg_set_err(err, err_size, "jit_create: cannot start compile thread %d", i);
            jit_destroy(j);
            return -1;
        }
        w->started = 1;
    }
    *out = j;
    return 0;
}

void jit_destroy(jit *j)
{
    if (!j)
        return;
    pthread_mutex_lock(&j->lock);
    j->stop = 1;
    pthread_cond_broadcast(&j->work);
    pthread_mutex_unlock(&j->lock);
    for (int i = 0; i < j->n_workers; i++) {
        if (j->workers[i].started)
            pthread_join(j->workers[i].thread, NULL);
        cg_toolchain_fini(&j->workers[i].tc);
    }
    free(j->workers);
    /* Tasks still queued were never waited on (a caller's bug): free them. */
    for (jit_task *t = j->head, *next; t; t = next) {
        next = t->next;
        for (int i = 0; i < t->n_syms; i++)
            free(t->syms[i]);
        free(t->syms);
        free(t);
    }
    for (size_t i = 0; i < j->table_cap; i++) {
        if (j->table[i]) {
            entry_clear(j->table[i]);
            free(j->table[i]);
        }
    }
    free(j->table);
    if (j->lljit) {
        LLVMErrorRef e = LLVMOrcDisposeLLJIT(j->lljit);
        if (e)
            LLVMConsumeError(e);
    }
    pthread_cond_destroy(&j->done);
    pthread_cond_destroy(&j->work);
    pthread_mutex_destroy(&j->lock);
    pthread_mutex_destroy(&j->lljit_lock);
    jit_disk_close(&j->disk);
    free(j);
}

/* ---- submitting and waiting ---- */

static void task_free(jit_task *t)
{
    for (int i = 0; i < t->n_syms; i++)
        free(t->syms[i]);
    free(t->syms);
    free(t);
}

static jit_task *task_new(jit *j, const jit_request *r, char *err, size_t err_size)
{
    if (!r || !r->build || r->n_symbols < 0 || (r->n_symbols > 0 && (!r->symbols || !r->addrs))) {
        cg_set_err(err, err_size, "jit_submit: bad request (needs build, and symbols and addrs "
                                  "when n_symbols > 0)");
        return NULL;
    }
    jit_task *t = calloc(1, sizeof *t);
    if (!t)
        goto oom;
    t->j = j;
    t->build = r->build;
    t->user = r->user;
    t->addrs = r->addrs;
    t->result = r->result;
    t->n_syms = r->n_symbols;
    t->syms = calloc((size_t)r->n_symbols + 1, sizeof *t->syms);
    if (!t->syms)
        goto oom;
    for (int i = 0; i < r->n_symbols; i++) {
        if (!r->symbols[i] || !r->symbols[i][0]) {
            cg_set_err(err, err_size, "jit_submit: key 0x%" PRIx64 ": symbol %d is empty",
                       r->key, i);
            task_free(t);
            return NULL;
        }
        t->syms[i] = strdup(r->symbols[i]);
        if (!t->syms[i])
            goto oom;
    }
    return t;
oom:
    if (t)
        task_free(t);
    cg_set_err(err, err_size, "jit_submit: out of memory");
    return NULL;
}

/* Under j->lock: attaches t to its key's entry, queueing it when it must compile. */
static int attach(jit *j, jit_task *t, uint64_t key, char *err, size_t err_size)
{
    entry *e = table_find(j, key);
    if (!e) {
        e = calloc(1, sizeof *e);
        if (e)
            e->key = key; /* before the insert: the slot is chosen by the key */
        if (!e || table_insert(j, e) != 0) {
            free(e);
            cg_set_err(err, err_size, "jit_submit: out of memory");
            return -1;
        }
        e->state = ENTRY_FAILED; /* falls into the recompile below */
    }
    t->e = e;
    if (e->state == ENTRY_FAILED) {
        entry_clear(e);
        e->state = ENTRY_PENDING;
        e->attempts++;
        t->next = NULL;
        if (j->tail)
            j->tail->next = t;
        else
            j->head = t;
        j->tail = t;
        pthread_cond_signal(&j->work);
    } else {
        t->hit = 1;
        j->stats.cache_hits++;
    }
    return 0;
}

int jit_submit_batch(jit *j, const jit_request *reqs, int n, jit_task **tasks, char *err,
                     size_t err_size)
{
    if (!j || n < 0 || (n > 0 && (!reqs || !tasks))) {
        cg_set_err(err, err_size, "jit_submit: bad arguments");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        tasks[i] = task_new(j, &reqs[i], err, err_size);
        if (!tasks[i]) {
            while (i--)
                task_free(tasks[i]);
            return -1;
        }
    }
    pthread_mutex_lock(&j->lock);
    for (int i = 0; i < n; i++) {
        if (attach(j, tasks[i], reqs[i].key, err, err_size) != 0) {
            /* Earlier tasks are queued already: they stay valid and must be waited on; the
             * rest are freed and reported as not submitted. */
            for (int k = i; k < n; k++) {
                task_free(tasks[k]);
                tasks[k] = NULL;
            }
            pthread_mutex_unlock(&j->lock);
            return -1;
        }
    }
    pthread_mutex_unlock(&j->lock);
    return 0;
}

int jit_submit(jit *j, const jit_request *req, jit_task **out, char *err, size_t err_size)
{
    if (!out) {
        cg_set_err(err, err_size, "jit_submit: out is NULL");
        return -1;
    }
    *out = NULL;
    return jit_submit_batch(j, req, 1, out, err, err_size);
}

int jit_wait(jit_task *t, char *err, size_t err_size)
{
    if (!t) {
        cg_set_err(err, err_size, "jit_wait: task is NULL");
        return -1;
    }
    jit *j = t->j;
    entry *e = t->e;
    int rc = 0;
    pthread_mutex_lock(&j->lock);
    while (e->state == ENTRY_PENDING)
        pthread_cond_wait(&j->done, &j->lock);
    if (e->state == ENTRY_FAILED) {
        cg_set_err(err, err_size, "%s", e->error ? e->error : "jit: compile failed");
        rc = -1;
    } else {
        for (int i = 0; i < t->n_syms; i++) {
            int k = 0;
            while (k < e->n && strcmp(e->names[k], t->syms[i]) != 0)
                k++;
            if (k == e->n) {
                cg_set_err(err, err_size,
                           "jit key 0x%" PRIx64 ": '%s' was not exported by the first request "
                           "of this key",
                           e->key, t->syms[i]);
                rc = -1;
                t->addrs[i] = NULL;
            } else {
                t->addrs[i] = e->addrs[k];
            }
        }
    }
    if (t->result) {
        t->result->cache_hit = t->hit;
        t->result->compile_s = e->compile_s;
        t->result->instructions = e->instructions;
    }
    pthread_mutex_unlock(&j->lock);
    task_free(t);
    return rc;
}

int jit_cancel_queued(jit *j)
{
    int n = 0;
    pthread_mutex_lock(&j->lock);
    for (jit_task *t = j->head; t; t = t->next, n++) {
        entry *e = t->e;
        entry_clear(e);
        e->error = strdup("cancelled before it compiled");
        e->state = ENTRY_FAILED;
    }
    j->head = j->tail = NULL;
    pthread_cond_broadcast(&j->done);
    pthread_mutex_unlock(&j->lock);
    return n;
}

int jit_wait_all(jit_task **tasks, int n, char *err, size_t err_size)
{
    int rc = 0;
    char msg[1024];
    for (int i = 0; i < n; i++) {
        if (!tasks[i])
            continue;
        if (jit_wait(tasks[i], msg, sizeof msg) != 0 && rc == 0) {
            cg_set_err(err, err_size, "%s", msg);
            rc = -1;
        }
        tasks[i] = NULL;
    }
    return rc;
}

int jit_compile(jit *j, const jit_request *req, char *err, size_t err_size)
{
    jit_task *t;
    if (jit_submit(j, req, &t, err, err_size) != 0)
        return -1;
    return jit_wait(t, err, err_size);
}

void jit_get_stats(jit *j, jit_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!j)
        return;
    pthread_mutex_lock(&j->lock);
    *out = j->stats;
    pthread_mutex_unlock(&j->lock);
}
