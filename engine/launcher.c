/* The launch thread of a CPU context (launcher.h). */
#define _GNU_SOURCE
#include "engine/launcher.h"
#include "engine/exec_cuda.h"

#if PLUME_HAVE_KERNELS
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct launch_job {
    struct launch_job *next;
    sfg_batch batch;      /* its tasks and edges are the arrays below */
    sfg_exec_task *tasks; /* args and names point into `bytes` */
    sfg_edge *edges;
    eng_code **codes;
    unsigned char *fresh;
    char *bytes;
    int dropped; /* flushed while an earlier failure was being reported: compile only */
} launch_job;

struct eng_launcher {
    eng_context *ctx;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t work; /* a job was queued, or stop */
    pthread_cond_t idle; /* the queue emptied and nothing runs */
    launch_job *head, *tail;
    int busy, stop;
    int rc;                  /* error of a failed batch, not yet reported; 0: none */
    char err[ENG_ERR_SIZE];  /* its message */
    char scratch[ENG_ERR_SIZE]; /* eng_fail's target on the launch thread */
};

static _Thread_local int tl_launch_thread;

int eng_on_launch_thread(void) { return tl_launch_thread; }

static void job_free(launch_job *j)
{
    if (!j)
        return;
    free(j->tasks);
    free(j->edges);
    free(j->codes);
    free(j->fresh);
    free(j->bytes);
    free(j);
}

static void *launch_main(void *arg)
{
    eng_launcher *L = arg;
    tl_launch_thread = 1;
    eng_thread_err = L->scratch;
    pthread_mutex_lock(&L->lock);
    for (;;) {
        while (!L->head && !L->stop)
            pthread_cond_wait(&L->work, &L->lock);
        if (!L->head)
            break;
        launch_job *j = L->head;
        L->head = j->next;
        if (!L->head)
            L->tail = NULL;
        /* after a failure nothing runs until the host has heard */
        int skip = L->rc != 0 || j->dropped;
        L->busy = 1;
        pthread_mutex_unlock(&L->lock);
        int rc = 0;
        if (!skip)
            rc = eng_exec_resolved(L->ctx, &j->batch, j->codes, j->fresh);
        else /* dropped, but its new code entries must not stay empty for later batches */
            eng_compile_resolved(L->ctx, &j->batch, j->codes, j->fresh);
        job_free(j);
        pthread_mutex_lock(&L->lock);
        if (rc && !L->rc) {
            L->rc = rc;
            memcpy(L->err, L->scratch, sizeof L->err);
        }
        L->busy = 0;
        if (!L->head)
            pthread_cond_broadcast(&L->idle);
    }
    pthread_mutex_unlock(&L->lock);
    return NULL;
}

static eng_launcher *start(eng_context *ctx)
{
    if (ctx->launcher)
        return ctx->launcher;
    eng_launcher *L = calloc(1, sizeof *L);
    if (!L)
        return NULL;
    L->ctx = ctx;
    pthread_mutex_init(&L->lock, NULL);
    pthread_cond_init(&L->work, NULL);
    pthread_cond_init(&L->idle, NULL);
    if (pthread_create(&L->thread, NULL, launch_main, L) != 0) {
        pthread_mutex_destroy(&L->lock);
        pthread_cond_destroy(&L->work);
        pthread_cond_destroy(&L->idle);
        free(L);
        return NULL;
    }
    ctx->launcher = L;
    return L;
}

/* The pending error, moved to the context (caller holds the lock). */
static int take_error(eng_launcher *L)
{
    int rc = L->rc;
    if (rc) {
        memcpy(L->ctx->err, L->err, sizeof L->err);
        L->rc = 0;
    }
    return rc;
}

/* A copy of the batch that owns its argument bytes and names. */
static launch_job *copy_batch(const sfg_batch *b, eng_code *const *codes, const unsigned char *fresh)
{
    uint32_t n = b->n_tasks;
    size_t bytes = 0;
    for (uint32_t i = 0; i < n; i++)
        bytes += b->tasks[i].args_size + strlen(b->tasks[i].name ? b->tasks[i].name : "") + 1 + 16;
    launch_job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->tasks = malloc((n ? n : 1) * sizeof *j->tasks);
    j->edges = malloc((b->n_edges ? b->n_edges : 1) * sizeof *j->edges);
    j->codes = malloc((n ? n : 1) * sizeof *j->codes);
    j->fresh = malloc(n ? n : 1);
    j->bytes = malloc(bytes ? bytes : 1);
    if (!j->tasks || !j->edges || !j->codes || !j->fresh || !j->bytes) {
        job_free(j);
        return NULL;
    }
    if (b->n_edges)
        memcpy(j->edges, b->edges, b->n_edges * sizeof *j->edges);
    j->batch = *b;
    j->batch.tasks = j->tasks;
    j->batch.edges = j->edges;
    char *p = j->bytes;
    for (uint32_t i = 0; i < n; i++) {
        sfg_exec_task t = b->tasks[i];
        /* argument blocks keep 16-byte alignment: tasks read 8-byte slots from them */
        p += (16 - ((uintptr_t)p & 15)) & 15;
        if (t.args_size) {
            memcpy(p, t.args, t.args_size);
            t.args = p;
            p += t.args_size;
        } else {
            t.args = NULL;
        }
        const char *name = t.name ? t.name : "";
        size_t len = strlen(name) + 1;
        memcpy(p, name, len);
        t.name = p;
        p += len;
        j->tasks[i] = t;
        j->codes[i] = codes[i];
        j->fresh[i] = fresh[i];
    }
    return j;
}

int eng_launcher_submit(eng_context *ctx, const sfg_batch *batch, eng_code *const *codes,
                        const unsigned char *fresh)
{
    eng_launcher *L = start(ctx);
    if (!L)
        return eng_fail(ctx, ENG_EINTERNAL, "cannot start the launch thread");
    launch_job *j = copy_batch(batch, codes, fresh);
    if (!j)
        return eng_fail(ctx, ENG_ENOMEM, "out of host memory");
    pthread_mutex_lock(&L->lock);
    /* an earlier batch failed: this one is dropped, after compiling what is new in it */
    int rc = take_error(L);
    j->dropped = rc != 0;
    if (L->tail)
        L->tail->next = j;
    else
        L->head = j;
    L->tail = j;
    pthread_cond_signal(&L->work);
    pthread_mutex_unlock(&L->lock);
    if (rc)
        return rc;
    ctx->stats.batches_async++;
    return ENG_OK;
}

static int wait_idle(eng_context *ctx, int take)
{
    eng_launcher *L = ctx->launcher;
    if (!L || tl_launch_thread)
        return ENG_OK;
    pthread_mutex_lock(&L->lock);
    while (L->head || L->busy)
        pthread_cond_wait(&L->idle, &L->lock);
    int rc = take ? take_error(L) : ENG_OK;
    pthread_mutex_unlock(&L->lock);
    return rc;
}

int eng_launcher_drain_thread(eng_context *ctx) { return wait_idle(ctx, 1); }

/* Then the GPU's stream: batches left running there (exec_cuda.h) are waited for too. */
int eng_launcher_drain(eng_context *ctx)
{
    int rc = wait_idle(ctx, 1);
    if (tl_launch_thread)
        return rc;
    /* an error of the launch thread is the one reported; the GPU's wait for the next drain */
    int rd = eng_cuda_drain(ctx, rc == ENG_OK);
    return rc ? rc : rd;
}

void eng_launcher_wait(eng_context *ctx)
{
    wait_idle(ctx, 0);
    if (!tl_launch_thread)
        eng_cuda_drain(ctx, 0);
}

void eng_launcher_stop(eng_context *ctx)
{
    eng_launcher *L = ctx->launcher;
    if (!L)
        return;
    pthread_mutex_lock(&L->lock);
    L->stop = 1;
    pthread_cond_signal(&L->work);
    pthread_mutex_unlock(&L->lock);
    /* the thread runs what is queued before it sees stop */
    pthread_join(L->thread, NULL);
    pthread_mutex_destroy(&L->lock);
    pthread_cond_destroy(&L->work);
    pthread_cond_destroy(&L->idle);
    free(L);
    ctx->launcher = NULL;
}
#endif
