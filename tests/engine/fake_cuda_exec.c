/* A fake libcuda.so.1 that lets a whole GPU context run on a machine without a GPU, to check
 * what the engine asks of the driver and in which order (tests/engine/test_cuda_exec.c).
 *
 * One device, sm_90, 4 multiprocessors, managed memory. Memory of every kind is host memory.
 * Modules load from any image; kernels do nothing. Work queued on a stream (copies, kernel and
 * graph launches, event records) stays pending until a synchronization says it finished
 * (cuStreamSynchronize, cuEventSynchronize, cuCtxSynchronize): only then does an asynchronous
 * copy read its source. A copy whose source changed between the call and its completion is
 * counted as a violation (the host overwrote a staging buffer still in use), as is an elapsed
 * time asked of an event that has not completed, and freeing a buffer a queued copy still reads
 * (a free waits for the device otherwise, as a real one may).
 * fake_exec_stats() hands the counters to the test, which finds this library with dlopen. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

#define API __attribute__((visibility("default")))

typedef unsigned long long devptr;

/* What the test reads (keep in step with test_cuda_exec.c). */
typedef struct fake_exec_stats_t {
    unsigned long long kernels, graph_launches, graphs_instantiated, copies_async;
    unsigned long long stream_syncs, event_syncs, ctx_syncs;
    unsigned long long pending;          /* operations queued and not yet completed */
    unsigned long long violations;       /* see above */
    unsigned long long elapsed_queries;
    unsigned long long events_recorded;
} fake_exec_stats_t;

static fake_exec_stats_t st;

enum { OP_COPY, OP_KERNEL, OP_GRAPH, OP_EVENT, OP_MEMSET };
typedef struct op {
    int kind;
    devptr dst;
    const void *src;
    size_t n;
    uint64_t sum;
} op;

static op *ops;
static size_t nops, capops, done;

typedef struct fake_event {
    size_t at;   /* operations queued before it was recorded */
    int recorded;
} fake_event;

API const fake_exec_stats_t *fake_exec_stats(void)
{
    st.pending = nops - done;
    return &st;
}

static uint64_t sum_of(const void *p, size_t n)
{
    const unsigned char *c = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

/* The op list is shared by the context's thread and the launch thread (a real driver is
 * thread-safe): one lock around its changes. */
static pthread_mutex_t ops_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

static int push_locked(op o);
static int push(op o)
{
    pthread_mutex_lock(&ops_lock);
    int rc = push_locked(o);
    pthread_mutex_unlock(&ops_lock);
    return rc;
}
static int push_locked(op o)
{
    if (nops == capops) {
        size_t cap = capops ? 2 * capops : 1024;
        op *p = realloc(ops, cap * sizeof *p);
        if (!p)
            return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
        ops = p;
        capops = cap;
    }
    ops[nops++] = o;
    return 0;
}

static void guard(int on);
static int guarded;

static void complete_to(size_t k)
{
    pthread_mutex_lock(&ops_lock);
    if (k == nops)
        guard(0);
    for (; done < k; done++) {
        op *o = &ops[done];
        if (o->kind == OP_MEMSET) {
            /* in stream order, as the device would: the host's guard does not apply */
            int was = guarded;
            guard(0);
            memset((void *)(uintptr_t)o->dst, (int)o->sum, o->n);
            guard(was);
            continue;
        }
        if (o->kind != OP_COPY)
            continue;
        if (sum_of(o->src, o->n) != o->sum)
            st.violations++;
        memcpy((void *)(uintptr_t)o->dst, o->src, o->n);
    }
    pthread_mutex_unlock(&ops_lock);
}

API int cuInit(unsigned flags)
{
    (void)flags;
    return 0;
}
API int cuDriverGetVersion(int *v)
{
    *v = 12040;
    return 0;
}
API int cuGetErrorName(int e, const char **s)
{
    *s = e == 600 ? "CUDA_ERROR_NOT_READY" : "CUDA_ERROR_FAKE";
    return 0;
}
API int cuGetErrorString(int e, const char **s)
{
    *s = e == 600 ? "not ready" : "an error of the fake driver";
    return 0;
}
API int cuDeviceGetCount(int *n)
{
    *n = 1;
    return 0;
}
API int cuDeviceGet(int *d, int ordinal)
{
    *d = 0;
    return ordinal == 0 ? 0 : 101;
}
API int cuDeviceGetName(char *name, int len, int dev)
{
    (void)dev;
    snprintf(name, (size_t)len, "Fake ordering GPU");
    return 0;
}
API int cuDeviceGetAttribute(int *v, int attr, int dev)
{
    (void)dev;
    switch (attr) {
    case 75: *v = 9; break;    /* compute capability 9.0 */
    case 76: *v = 0; break;
    case 16: *v = 4; break;    /* multiprocessors */
    case 1: *v = 1024; break;  /* threads per block */
    case 10: *v = 32; break;   /* warp */
    case 83: *v = 1; break;    /* managed memory */
    case 89: *v = 1; break;    /* concurrent managed access */
    default: *v = 0; break;
    }
    return 0;
}
API int cuDeviceTotalMem_v2(size_t *b, int dev)
{
    (void)dev;
    *b = (size_t)4 << 30;
    return 0;
}
API int cuDevicePrimaryCtxRetain(void **c, int d)
{
    (void)d;
    static int ctx;
    *c = &ctx;
    return 0;
}
API int cuDevicePrimaryCtxRelease_v2(int d)
{
    (void)d;
    return 0;
}
API int cuCtxSetCurrent(void *c)
{
    (void)c;
    return 0;
}
API int cuCtxSynchronize(void)
{
    st.ctx_syncs++;
    complete_to(nops);
    return 0;
}
API int cuCtxSetLimit(int limit, size_t value)
{
    (void)limit;
    (void)value;
    return 0;
}

API int cuModuleLoadDataEx(void **m, const void *img, unsigned n, int *opt, void **val)
{
    (void)img;
    (void)n;
    (void)opt;
    (void)val;
    *m = malloc(1);
    return *m ? 0 : 2;
}
API int cuModuleUnload(void *m)
{
    free(m);
    return 0;
}
API int cuModuleGetFunction(void **f, void *m, const char *name)
{
    (void)m;
    (void)name;
    static char fn[64];
    static unsigned next;
    *f = &fn[next++ % 64];
    return 0;
}
API int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, unsigned shared, void *stream, void **params, void **extra)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared;
    (void)stream, (void)params, (void)extra;
    st.kernels++;
    guard(1);
    return push((op){.kind = OP_KERNEL});
}

/* Page-aligned, zero-filled, and only touched pages cost anything (the pool asks for most of
 * the device's memory): anonymous mappings, remembered for the unmap. */
typedef struct mapping {
    void *p;
    size_t n;
    int managed;
} mapping;
static mapping maps[1024];

/* Managed memory is what kernels and the host share: while a kernel or graph is queued and not
 * completed it is made inaccessible, so a host access the engine did not wait for first faults
 * (FAKE_CUDA_GUARD=0 turns this off). */
static void guard(int on)
{
    const char *g = getenv("FAKE_CUDA_GUARD");
    if (on == guarded || (g && !strcmp(g, "0")))
        return;
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        if (maps[i].p && maps[i].managed)
            mprotect(maps[i].p, maps[i].n, on ? PROT_NONE : PROT_READ | PROT_WRITE);
    guarded = on;
}

/* For a test that plays a kernel's part: 1 lifts the guard for the host, 0 puts it back. */
API void fake_exec_kernel_side(int on)
{
    static int saved;
    if (on) {
        saved = guarded;
        guard(0);
    } else {
        guard(saved);
    }
}

static void *host_mem(size_t n)
{
    void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        if (!maps[i].p) {
            maps[i] = (mapping){p, n ? n : 1, 0};
            return p;
        }
    munmap(p, n ? n : 1);
    return NULL;
}
/* Freeing waits for the device, as a real free may; freeing a buffer a queued copy has still
 * to read is the caller's mistake. */
static int free_mem(void *p)
{
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        if (maps[i].p == p) {
            const char *lo = p, *hi = lo + maps[i].n;
            for (size_t k = done; k < nops; k++)
                if (ops[k].kind == OP_COPY && (const char *)ops[k].src >= lo &&
                    (const char *)ops[k].src < hi)
                    st.violations++;
            complete_to(nops);
            munmap(p, maps[i].n);
            maps[i].p = NULL;
            return 0;
        }
    return p ? 1 : 0; /* CUDA_ERROR_INVALID_VALUE: not ours */
}
API int cuMemAlloc_v2(devptr *p, size_t n)
{
    void *h = host_mem(n);
    *p = (devptr)(uintptr_t)h;
    return h ? 0 : 2;
}
API int cuMemFree_v2(devptr p) { return free_mem((void *)(uintptr_t)p); }
API int cuMemAllocManaged(devptr *p, size_t n, unsigned flags)
{
    (void)flags;
    int rc = cuMemAlloc_v2(p, n);
    for (size_t i = 0; !rc && i < sizeof maps / sizeof maps[0]; i++)
        if (maps[i].p == (void *)(uintptr_t)*p) {
            maps[i].managed = 1;
            if (guarded)
                mprotect(maps[i].p, maps[i].n, PROT_NONE);
        }
    return rc;
}
API int cuMemHostAlloc(void **p, size_t n, unsigned flags)
{
    (void)flags;
    *p = host_mem(n);
    return *p ? 0 : 2;
}
API int cuMemFreeHost(void *p) { return free_mem(p); }
API int cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    *free_bytes = (size_t)3 << 30;
    *total = (size_t)4 << 30;
    return 0;
}
/* The synchronous forms run at once, as on the legacy stream, which a non-blocking stream's
 * work does not wait for. */
API int cuMemcpyHtoD_v2(devptr d, const void *s, size_t n)
{
    memcpy((void *)(uintptr_t)d, s, n);
    return 0;
}
API int cuMemcpyDtoH_v2(void *d, devptr s, size_t n)
{
    memcpy(d, (const void *)(uintptr_t)s, n);
    return 0;
}
API int cuMemsetD8_v2(devptr d, unsigned char v, size_t n)
{
    memset((void *)(uintptr_t)d, v, n);
    return 0;
}
API int cuMemcpyHtoDAsync_v2(devptr d, const void *s, size_t n, void *stream)
{
    (void)stream;
    st.copies_async++;
    return push((op){.kind = OP_COPY, .dst = d, .src = s, .n = n, .sum = sum_of(s, n)});
}
API int cuMemcpyDtoHAsync_v2(void *d, devptr s, size_t n, void *stream)
{
    (void)stream;
    complete_to(nops);
    memcpy(d, (const void *)(uintptr_t)s, n);
    return 0;
}
API int cuMemsetD8Async(devptr d, unsigned char v, size_t n, void *stream)
{
    (void)stream;
    return push((op){.kind = OP_MEMSET, .dst = d, .n = n, .sum = v});
}

API int cuStreamCreate(void **s, unsigned flags)
{
    (void)flags;
    *s = malloc(1);
    return *s ? 0 : 2;
}
API int cuStreamDestroy_v2(void *s)
{
    complete_to(nops);
    free(s);
    return 0;
}
API int cuStreamSynchronize(void *s)
{
    (void)s;
    st.stream_syncs++;
    complete_to(nops);
    return 0;
}
/* Queries, for the host's watchdog (PLUME_CUDA_WATCHDOG): with FAKE_CUDA_BUSY_MS=N the device
 * looks busy for N ms from the first query that finds the work unfinished, as a long kernel
 * would; otherwise the work completes at the query. */
static double busy_since = -1;
static int busy(size_t upto)
{
    const char *b = getenv("FAKE_CUDA_BUSY_MS");
    if (!b || upto <= done)
        return 0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double now = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
    if (busy_since < 0)
        busy_since = now;
    if (now - busy_since < atof(b))
        return 1;
    busy_since = -1;
    return 0;
}
API int cuStreamQuery(void *s)
{
    (void)s;
    if (busy(nops))
        return 600; /* CUDA_ERROR_NOT_READY */
    complete_to(nops);
    return 0;
}
API int cuEventQuery(void *e)
{
    fake_event *ev = e;
    if (busy(ev->at))
        return 600;
    complete_to(ev->at);
    return 0;
}
API int cuEventCreate(void **e, unsigned flags)
{
    (void)flags;
    *e = calloc(1, sizeof(fake_event));
    return *e ? 0 : 2;
}
API int cuEventDestroy_v2(void *e)
{
    free(e);
    return 0;
}
API int cuEventRecord(void *e, void *stream)
{
    (void)stream;
    fake_event *ev = e;
    st.events_recorded++;
    ev->at = nops;
    ev->recorded = 1;
    return push((op){.kind = OP_EVENT});
}
API int cuEventSynchronize(void *e)
{
    fake_event *ev = e;
    st.event_syncs++;
    complete_to(ev->at);
    return 0;
}
API int cuEventElapsedTime(float *ms, void *a, void *b)
{
    fake_event *x = a, *y = b;
    st.elapsed_queries++;
    if (!x->recorded || !y->recorded || y->at > done || x->at > done) {
        st.violations++;
        return 600; /* CUDA_ERROR_NOT_READY */
    }
    *ms = 0.001f * (float)(y->at - x->at + 1);
    return 0;
}

/* Graphs: a launch is one queued operation. */
API int cuStreamBeginCapture_v2(void *s, int mode)
{
    (void)s;
    (void)mode;
    return 801; /* not supported */
}
API int cuStreamEndCapture(void *s, void **g)
{
    (void)s;
    (void)g;
    return 801;
}
API int cuGraphCreate(void **g, unsigned flags)
{
    (void)flags;
    *g = malloc(1);
    return *g ? 0 : 2;
}
API int cuGraphAddKernelNode(void **node, void *g, void *const *deps, size_t n, const void *p)
{
    (void)g, (void)deps, (void)n, (void)p;
    static char nodes[64];
    static unsigned next;
    *node = &nodes[next++ % 64];
    return 0;
}
API int cuGraphAddDependencies(void *g, void *const *from, void *const *to, size_t n)
{
    (void)g, (void)from, (void)to, (void)n;
    return 0;
}
API int cuGraphInstantiateWithFlags(void **exec, void *g, unsigned long long flags)
{
    (void)g;
    (void)flags;
    st.graphs_instantiated++;
    *exec = malloc(1);
    return *exec ? 0 : 2;
}
API int cuGraphLaunch(void *exec, void *stream)
{
    (void)exec;
    (void)stream;
    st.graph_launches++;
    guard(1);
    return push((op){.kind = OP_GRAPH});
}
API int cuGraphExecKernelNodeSetParams(void *exec, void *node, const void *p)
{
    (void)exec, (void)node, (void)p;
    return 0;
}
API int cuGraphExecDestroy(void *exec)
{
    free(exec);
    return 0;
}
API int cuGraphDestroy(void *g)
{
    free(g);
    return 0;
}
