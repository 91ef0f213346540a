/* The "plume.checkpoint/1" extension (plume.h): every field of a context to one .vdb file and
 * back, bit for bit.
 *
 * File layout. One grid per field, in the context's declaration order (a context restored
 * into a fresh one then numbers its fields as the original did), named like the field. File
 * metadata: "plume_checkpoint" (format "1"), "plume_frame", "plume_key", "creator". Grid
 * metadata carries what the field was declared with, exactly (hex floats): "plume_type",
 * "plume_layout" ("" = the default volume layout), "plume_voxel_size", "plume_origin",
 * "plume_background", and "plume_storage": "blocks" for fields of 8x8x8 blocks (each active
 * block is one VDB leaf with every voxel, background-valued ones included), "cells" for other
 * layouts (0-D scalars, 1-D arrays: each active cell is an active voxel at its index). A
 * transient field (engine.h: a node's temporaries, whose values no later cook reads) is stored
 * as its declaration only, an empty grid with "plume_transient" "1", and restored empty (the
 * node that owns it marks it transient again: that is its code's to say, not a file's): in the
 * default smoke scene that leaves 3.5 MB of 27 MB. A checkpoint without the
 * key (all fields stored) loads the same way. The transform is the one the export node writes
 * (voxel centres), so other tools line it up.
 *
 * Threads: the context's thread only, like every call on a context; save_begin's file is
 * written by a thread of its own, which reads only the grids captured for it (ckpt_job). */
#define _GNU_SOURCE
#include "plugin/plugin.h"
#include "plugin/vdb_stable.h"
#include "plugin/write_queue.h"
#include "engine/kernel.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CKPT_FORMAT "1"

static void hex3(char *out, size_t n, const double v[3])
{
    snprintf(out, n, "%a %a %a", v[0], v[1], v[2]);
}

static int parse3(const char *s, double v[3])
{
    char *end;
    for (int k = 0; k < 3; k++) {
        v[k] = strtod(s, &end);
        if (end == s)
            return -1;
        s = end;
    }
    return *s ? -1 : 0;
}

/* ------------------------------------------------------------------------------- saving */

typedef struct cell {
    int32_t leaf[3]; /* origin of the VDB leaf holding the cell */
    int32_t n;       /* voxel index inside it */
    float v[3];
} cell;

typedef struct cell_list {
    cell *c;
    size_t n, cap;
    int comps;
} cell_list;

static int32_t floor8(int32_t x) { return (int32_t)((uint32_t)x & ~7u); }

static int add_cell(void *user, const int32_t ijk[3], const float *value)
{
    cell_list *l = user;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        cell *g = realloc(l->c, cap * sizeof *g);
        if (!g)
            return ENG_ENOMEM;
        l->c = g;
        l->cap = cap;
    }
    cell *c = &l->c[l->n++];
    memset(c, 0, sizeof *c);
    for (int k = 0; k < 3; k++)
        c->leaf[k] = floor8(ijk[k]);
    c->n = (ijk[0] - c->leaf[0]) * 64 + (ijk[1] - c->leaf[1]) * 8 + (ijk[2] - c->leaf[2]);
    memcpy(c->v, value, (size_t)l->comps * sizeof *value);
    return 0;
}

static int cmp_cell(const void *pa, const void *pb)
{
    const cell *a = pa, *b = pb;
    for (int k = 2; k >= 0; k--)
        if (a->leaf[k] != b->leaf[k])
            return a->leaf[k] < b->leaf[k] ? -1 : 1;
    return (a->n > b->n) - (a->n < b->n);
}

static plume_status vdb_error(pl_context *ctx, const char *what, const plm_vdb_error *e)
{
    return pl_fail(ctx, e->status == PLM_VDB_ERR_MEMORY ? PLUME_ERR_INTERNAL : PLUME_ERR_IO, "%s: %s", what,
                   e->message);
}

/* The field's blocks or cells as VDB leaves of g. */
static plume_status fill_grid(pl_context *ctx, eng_field *f, plm_vdb_grid *g, const char *path)
{
    int comps = eng_field_components(f);
    const float *bg = eng_field_info(f)->background;
    float *vals = malloc(3 * 512 * sizeof *vals);
    if (!vals)
        return pl_fail(ctx, PLUME_ERR_INTERNAL, "out of host memory");
    plm_vdb_error e;
    plume_status st = PLUME_OK;
    if (eng_field_has_blocks(f)) {
        uint64_t nb = eng_field_block_count(f);
        int32_t *o = malloc((size_t)(nb ? nb : 1) * 3 * sizeof *o);
        if (!o) {
            free(vals);
            return pl_fail(ctx, PLUME_ERR_INTERNAL, "out of host memory");
        }
        nb = eng_field_block_origins(f, o, nb);
        for (uint64_t b = 0; b < nb && st == PLUME_OK; b++) {
            uint64_t mask[8];
            eng_field_read_block(f, o + 3 * b, vals, mask);
            if (plm_vdb_grid_add_leaf(g, o + 3 * b, vals, mask, &e) != PLM_VDB_OK)
                st = vdb_error(ctx, path, &e);
        }
        free(o);
        free(vals);
        return st;
    }
    cell_list l = {NULL, 0, 0, comps};
    int rc = eng_field_foreach_cell(ctx->eng, f, add_cell, &l);
    if (rc) {
        free(l.c);
        free(vals);
        return pl_from_engine(ctx, rc);
    }
    if (l.n > 1)
        qsort(l.c, l.n, sizeof *l.c, cmp_cell);
    for (size_t i = 0; i < l.n && st == PLUME_OK;) {
        uint64_t mask[8] = {0};
        for (int n = 0; n < 512; n++)
            for (int k = 0; k < comps; k++)
                vals[n * comps + k] = bg[k];
        size_t j = i;
        for (; j < l.n && !memcmp(l.c[j].leaf, l.c[i].leaf, sizeof l.c[i].leaf); j++) {
            mask[l.c[j].n >> 6] |= 1ull << (l.c[j].n & 63);
            memcpy(&vals[l.c[j].n * comps], l.c[j].v, (size_t)comps * sizeof(float));
        }
        if (plm_vdb_grid_add_leaf(g, l.c[i].leaf, vals, mask, &e) != PLM_VDB_OK)
            st = vdb_error(ctx, path, &e);
        i = j;
    }
    free(l.c);
    free(vals);
    return st;
}

static plume_status field_grid(pl_context *ctx, eng_field *f, const char *path, plm_vdb_grid **out)
{
    const eng_field_desc *d = eng_field_info(f);
    int comps = eng_field_components(f);
    plm_vdb_grid_desc gd;
    memset(&gd, 0, sizeof gd);
    gd.name = d->name;
    gd.type = comps == 3 ? PLM_VDB_TYPE_VEC3 : PLM_VDB_TYPE_FLOAT;
    gd.grid_class = PLM_VDB_CLASS_UNKNOWN;
    for (int k = 0; k < 3; k++) {
        gd.background[k] = d->background[k];
        gd.index_to_world[k][k] = d->voxel_size;
        gd.index_to_world[k][3] = d->origin[k] + 0.5 * d->voxel_size;
    }
    gd.index_to_world[3][3] = 1;
    plm_vdb_error e;
    plm_vdb_grid *g = NULL;
    if (plm_vdb_grid_create(&gd, &g, &e) != PLM_VDB_OK)
        return vdb_error(ctx, path, &e);
    char h[64], origin[200], bgtext[200];
    double bg[3] = {d->background[0], d->background[1], d->background[2]};
    snprintf(h, sizeof h, "%a", d->voxel_size);
    hex3(origin, sizeof origin, d->origin);
    hex3(bgtext, sizeof bgtext, bg);
    const char *kv[][2] = {{"plume_type", comps == 3 ? "vec3" : "f32"},
                           {"plume_layout", d->layout ? d->layout : ""},
                           {"plume_voxel_size", h},
                           {"plume_origin", origin},
                           {"plume_background", bgtext},
                           {"plume_storage", eng_field_has_blocks(f) ? "blocks" : "cells"},
                           {"plume_transient", "1"}};
    int transient = eng_field_is_transient(f);
    size_t nkv = sizeof kv / sizeof kv[0] - (transient ? 0 : 1);
    plume_status st = PLUME_OK;
    for (size_t i = 0; i < nkv && st == PLUME_OK; i++)
        if (plm_vdb_grid_set_meta(g, kv[i][0], "string", kv[i][1], &e) != PLM_VDB_OK)
            st = vdb_error(ctx, path, &e);
    if (st == PLUME_OK && !transient)
        st = fill_grid(ctx, f, g, path);
    if (st != PLUME_OK) {
        plm_vdb_grid_free(g);
        return st;
    }
    *out = g;
    return PLUME_OK;
}

/* One checkpoint between capture and file: the grids (a copy of every field), the file's
 * metadata and where it goes. Written by ckpt_write, on the context's thread (save) or on a
 * thread of its own (save_begin); owned by whoever holds it, freed by job_free. */
typedef struct ckpt_job {
    char *path, *key;
    char frame_text[32];
    plm_vdb_grid **grids;
    int n;
    pthread_t thread; /* save_begin's writer */
    pl_wq_barrier *after; /* the files queued before this checkpoint (write_queue.h); NULL: none */
    plume_status status;
    int uuid_left;
    char err[4600];
} ckpt_job;

static void job_free(ckpt_job *j)
{
    if (!j)
        return;
    pl_wq_barrier_wait(j->after, NULL, 0); /* frees it */
    for (int i = 0; i < j->n; i++)
        plm_vdb_grid_free(j->grids[i]);
    free(j->grids);
    free(j->path);
    free(j->key);
    free(j);
}

/* The state of ctx as grids, at a sync point (the context's thread). */
static plume_status capture(pl_context *ctx, const char *path, int64_t frame, const char *key, ckpt_job **out)
{
    *out = NULL;
    int rc = eng_sync(ctx->eng);
    if (rc)
        return pl_from_engine(ctx, rc);
    int n = eng_field_count(ctx->eng);
    ckpt_job *j = calloc(1, sizeof *j);
    if (j) {
        j->path = strdup(path);
        j->key = strdup(key ? key : "");
        j->grids = calloc((size_t)(n ? n : 1), sizeof *j->grids);
    }
    if (!j || !j->path || !j->key || !j->grids) {
        job_free(j);
        return pl_fail(ctx, PLUME_ERR_INTERNAL, "out of host memory");
    }
    snprintf(j->frame_text, sizeof j->frame_text, "%lld", (long long)frame);
    plume_status st = PLUME_OK;
    for (; j->n < n && st == PLUME_OK; j->n++)
        st = field_grid(ctx, eng_field_at(ctx->eng, j->n), path, &j->grids[j->n]);
    if (st != PLUME_OK) {
        j->n--; /* the failed one made no grid */
        job_free(j);
        return st;
    }
    if (ctx->writes && !(j->after = pl_wq_add_barrier(ctx->writes))) {
        job_free(j); /* without the barrier nothing would stop it after a failed file */
        return pl_fail(ctx, PLUME_ERR_INTERNAL, "out of host memory");
    }
    *out = j;
    return PLUME_OK;
}

/* Any thread: reads the job's grids only, and writes its status and message. */
static void ckpt_write(ckpt_job *j)
{
    plm_vdb_meta meta[4] = {{"creator", "string", "Plume " PLUME_VERSION_STRING},
                            {"plume_checkpoint", "string", CKPT_FORMAT},
                            {"plume_frame", "int64", j->frame_text},
                            {"plume_key", "string", j->key}};
    /* Raw values: blosc saved a fifth of the default scene's checkpoint (13.3 against 16.7
     * MB at frame 12; full-precision solver state compresses poorly) and doubled its write
     * time (60-65 against 28-38 ms), which a bake pays every frame; the file is replaced
     * each frame, so its size does not add up over a bake. */
    plm_vdb_write_options wo = {.compression = PLM_VDB_COMPRESS_NONE, .file_meta = meta, .file_meta_count = 4};
    /* A checkpoint says "every frame up to here is complete": not so while a file of those
     * frames failed (deferred writes). */
    char why[4000];
    int bad = pl_wq_barrier_wait(j->after, why, sizeof why);
    j->after = NULL;
    if (bad) {
        snprintf(j->err, sizeof j->err,
                 "%s: not written: %s (after a missing frame file, no checkpoint of this context is "
                 "written until one is loaded)",
                 j->path, why);
        j->status = PLUME_ERR_IO;
        return;
    }
    j->status = pl_vdb_write_stable_core(j->path, (const plm_vdb_grid *const *)j->grids, j->n, &wo, j->err,
                                         sizeof j->err, &j->uuid_left);
}

static void *writer_main(void *arg)
{
    ckpt_job *j = arg;
    ckpt_write(j);
    /* the copy is no longer needed: give its memory back now, not at the next wait */
    for (int i = 0; i < j->n; i++)
        plm_vdb_grid_free(j->grids[i]);
    j->n = 0;
    return NULL;
}

/* Joins the pending write of save_begin, if any. Its outcome is returned when `report` (in the
 * context's error, like any failed call), else logged at ERROR level when it failed. */
plume_status pl_checkpoint_wait(pl_context *ctx, int report)
{
    ckpt_job *j = ctx->ckpt_pending;
    if (!j)
        return PLUME_OK;
    ctx->ckpt_pending = NULL;
    pthread_join(j->thread, NULL);
    if (j->uuid_left)
        pl_log(ctx, PLUME_LOG_DEBUG, "%s: unknown OpenVDB header; its UUID is left random", j->path);
    plume_status st = j->status;
    if (st != PLUME_OK && report)
        st = pl_fail(ctx, st, "checkpoint of frame %s: %s", j->frame_text, j->err);
    else if (st != PLUME_OK)
        pl_log(ctx, PLUME_LOG_ERROR, "checkpoint of frame %s was not written: %s", j->frame_text, j->err);
    job_free(j);
    return report ? st : PLUME_OK;
}

/* Checks the arguments, waits for a pending write and captures the state: the first half of
 * save and save_begin. */
static plume_status start(plume_context *handle, const char *path, int64_t frame, const char *key,
                          const char *what, pl_context **ctx, ckpt_job **j)
{
    *j = NULL;
    *ctx = pl_context_get(handle);
    if (!*ctx)
        return pl_fail(NULL, PLUME_ERR_INVALID_HANDLE, "checkpoint %s: invalid context handle", what);
    if (pl_in_callback(*ctx))
        return pl_refuse_in_callback(*ctx, what);
    if (!path || !path[0])
        return pl_fail(*ctx, PLUME_ERR_INVALID_ARGUMENT, "checkpoint %s: no path", what);
    pl_checkpoint_wait(*ctx, 0);
    return capture(*ctx, path, frame, key, j);
}

/* Writes j on this thread and frees it. */
static plume_status write_here(pl_context *ctx, ckpt_job *j)
{
    ckpt_write(j);
    if (j->uuid_left)
        pl_log(ctx, PLUME_LOG_DEBUG, "%s: unknown OpenVDB header; its UUID is left random", j->path);
    plume_status st = j->status == PLUME_OK ? PLUME_OK : pl_fail(ctx, j->status, "%s", j->err);
    job_free(j);
    return st;
}

static plume_status ckpt_save(plume_context *handle, const char *path, int64_t frame, const char *key)
{
    pl_context *ctx;
    ckpt_job *j;
    plume_status st = start(handle, path, frame, key, "save", &ctx, &j);
    return st == PLUME_OK ? write_here(ctx, j) : st;
}

static plume_status ckpt_save_begin(plume_context *handle, const char *path, int64_t frame, const char *key)
{
    pl_context *ctx;
    ckpt_job *j;
    plume_status st = start(handle, path, frame, key, "save_begin", &ctx, &j);
    if (st != PLUME_OK)
        return st;
    int rc = pthread_create(&j->thread, NULL, writer_main, j);
    if (rc != 0) {
        pl_log(ctx, PLUME_LOG_DEBUG, "checkpoint: no writer thread (%s); writing on this one", strerror(rc));
        return write_here(ctx, j);
    }
    ctx->ckpt_pending = j;
    return PLUME_OK;
}

static plume_status ckpt_save_finish(plume_context *handle)
{
    pl_context *ctx = pl_context_get(handle);
    if (!ctx)
        return pl_fail(NULL, PLUME_ERR_INVALID_HANDLE, "checkpoint save_finish: invalid context handle");
    if (pl_in_callback(ctx))
        return pl_refuse_in_callback(ctx, "checkpoint save_finish");
    return pl_checkpoint_wait(ctx, 1);
}

/* ------------------------------------------------------------------------------ loading */

typedef struct ckpt_head {
    int64_t frame;
    const char *key; /* owned by the file */
} ckpt_head;

static plume_status open_checkpoint(pl_context *ctx, const char *path, plm_vdb_file **file, ckpt_head *h)
{
    plm_vdb_error e;
    if (plm_vdb_open(path, file, &e) != PLM_VDB_OK)
        return pl_fail(ctx, PLUME_ERR_IO, "checkpoint %s cannot be read: %s", path, e.message);
    /* OpenVDB reads damaged values without noticing; the content UUID the writer stamped
     * catches any byte changed since. */
    if (pl_vdb_stable_verify(path) == 0) {
        plm_vdb_close(*file);
        *file = NULL;
        return pl_fail(ctx, PLUME_ERR_IO,
                       "checkpoint %s is damaged: its bytes no longer match the content hash written with it",
                       path);
    }
    const char *format = NULL, *frame = NULL;
    h->key = NULL;
    for (int i = 0; i < plm_vdb_file_meta_count(*file); i++) {
        plm_vdb_meta m;
        if (plm_vdb_file_meta(*file, i, &m, &e) != PLM_VDB_OK)
            continue;
        if (!strcmp(m.key, "plume_checkpoint"))
            format = m.value;
        else if (!strcmp(m.key, "plume_frame"))
            frame = m.value;
        else if (!strcmp(m.key, "plume_key"))
            h->key = m.value;
    }
    plume_status st = PLUME_OK;
    char *end = NULL;
    if (!format)
        st = pl_fail(ctx, PLUME_ERR_IO, "%s is a .vdb file but not a Plume checkpoint (no plume_checkpoint metadata)",
                     path);
    else if (strcmp(format, CKPT_FORMAT))
        st = pl_fail(ctx, PLUME_ERR_IO, "checkpoint %s has format %s; this plugin reads format " CKPT_FORMAT, path,
                     format);
    else if (!frame || !h->key || (h->frame = strtoll(frame, &end, 10), !end || *end || end == frame))
        st = pl_fail(ctx, PLUME_ERR_IO, "checkpoint %s lacks its frame or key metadata", path);
    if (st != PLUME_OK) {
        plm_vdb_close(*file);
        *file = NULL;
    }
    return st;
}

static plume_status ckpt_info(plume_context *handle, const char *path, int64_t *frame, char **key)
{
    pl_context *ctx = pl_context_get(handle);
    if (!ctx)
        return pl_fail(NULL, PLUME_ERR_INVALID_HANDLE, "checkpoint info: invalid context handle");
    if (pl_in_callback(ctx))
        return pl_refuse_in_callback(ctx, "checkpoint info");
    if (!path || !frame)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "checkpoint info: path and frame are required");
    pl_checkpoint_wait(ctx, 0);
    if (key)
        *key = NULL;
    plm_vdb_file *file = NULL;
    ckpt_head h;
    plume_status st = open_checkpoint(ctx, path, &file, &h);
    if (st != PLUME_OK)
        return st;
    *frame = h.frame;
    if (key && !(*key = strdup(h.key)))
        st = pl_fail(ctx, PLUME_ERR_INTERNAL, "out of host memory");
    plm_vdb_close(file);
    return st;
}

/* What one grid of the checkpoint says about its field. */
typedef struct grid_spec {
    const plm_vdb_grid *g;
    plm_vdb_grid_info gi;
    eng_field_desc d;
    const char *storage;
    eng_field *f; /* the context's field of that name, or NULL: declared when loading */
} grid_spec;

static plume_status read_spec(pl_context *ctx, const char *path, const plm_vdb_grid *g, grid_spec *s)
{
    plm_vdb_error e;
    memset(s, 0, sizeof *s);
    s->g = g;
    if (plm_vdb_grid_get_info(g, &s->gi, &e) != PLM_VDB_OK)
        return vdb_error(ctx, path, &e);
    const char *type = NULL, *layout = NULL, *h = NULL, *origin = NULL, *bg = NULL, *tr = NULL;
    for (int i = 0; i < s->gi.meta_count; i++) {
        plm_vdb_meta m;
        if (plm_vdb_grid_meta(g, i, &m, &e) != PLM_VDB_OK)
            continue;
        const char **dst = !strcmp(m.key, "plume_type")         ? &type
                           : !strcmp(m.key, "plume_layout")     ? &layout
                           : !strcmp(m.key, "plume_voxel_size") ? &h
                           : !strcmp(m.key, "plume_origin")     ? &origin
                           : !strcmp(m.key, "plume_background") ? &bg
                           : !strcmp(m.key, "plume_storage")    ? &s->storage
                           : !strcmp(m.key, "plume_transient")  ? &tr
                                                                : NULL;
        if (dst)
            *dst = m.value;
    }
    double o[3], b[3];
    char *end = NULL;
    if (!type || !layout || !h || !origin || !bg || !s->storage || parse3(origin, o) || parse3(bg, b) ||
        (s->d.voxel_size = strtod(h, &end), !end || *end) ||
        (strcmp(s->storage, "blocks") && strcmp(s->storage, "cells")) || (tr && strcmp(tr, "1")))
        return pl_fail(ctx, PLUME_ERR_IO, "checkpoint %s: grid '%s' lacks Plume's field metadata or has it damaged",
                       path, s->gi.name);
    s->d.name = s->gi.name;
    s->d.type = !strcmp(type, "vec3") ? ENG_VEC3 : ENG_F32;
    if (s->gi.components != (s->d.type == ENG_VEC3 ? 3 : 1))
        return pl_fail(ctx, PLUME_ERR_IO, "checkpoint %s: grid '%s' is %s but its metadata says %s", path, s->gi.name,
                       s->gi.type_name, type);
    s->d.layout = layout;
    for (int k = 0; k < 3; k++) {
        s->d.origin[k] = o[k];
        s->d.background[k] = (float)b[k];
    }
    return PLUME_OK;
}

/* Fails unless the context's field can take the grid's contents as it is declared. */
static plume_status check_match(pl_context *ctx, const char *path, const grid_spec *s)
{
    const eng_field_desc *d = eng_field_info(s->f);
    const char *why = NULL;
    if (d->type != s->d.type)
        why = "type";
    else if (strcmp(d->layout ? d->layout : "", s->d.layout))
        why = "layout";
    else if (d->voxel_size != s->d.voxel_size)
        why = "voxel size";
    else if (d->origin[0] != s->d.origin[0] || d->origin[1] != s->d.origin[1] || d->origin[2] != s->d.origin[2])
        why = "origin";
    else if (eng_field_has_blocks(s->f) != !strcmp(s->storage, "blocks"))
        why = "storage";
    if (why)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT,
                       "checkpoint %s: field '%s' has another %s in the checkpoint than in this context", path,
                       d->name, why);
    return PLUME_OK;
}

static plume_status restore(pl_context *ctx, const char *path, grid_spec *s)
{
    eng_context *eng = ctx->eng;
    int rc;
    if (!s->f && (rc = eng_field_declare(eng, &s->d, &s->f)) != ENG_OK)
        return pl_from_engine(ctx, rc);
    int blocks = eng_field_has_blocks(s->f), comps = eng_field_components(s->f);
    if (blocks)
        eng_field_clear(eng, s->f);
    else
        eng_field_clear_cells(eng, s->f);
    eng_field_set_background(s->f, s->d.background);
    float *vals = malloc(3 * 512 * sizeof *vals);
    if (!vals)
        return pl_fail(ctx, PLUME_ERR_INTERNAL, "out of host memory");
    plume_status st = PLUME_OK;
    plm_vdb_error e;
    for (uint64_t i = 0; i < s->gi.leaf_count && st == PLUME_OK; i++) {
        int32_t o[3];
        uint64_t mask[8];
        if (plm_vdb_read_leaf(s->g, i, o, vals, mask, &e) != PLM_VDB_OK) {
            st = vdb_error(ctx, path, &e);
            break;
        }
        if (blocks) {
            if ((rc = eng_field_write_block(eng, s->f, o, vals, mask)) != ENG_OK)
                st = pl_from_engine(ctx, rc);
            continue;
        }
        for (int n = 0; n < 512 && st == PLUME_OK; n++) {
            if (!(mask[n >> 6] >> (n & 63) & 1))
                continue;
            int32_t ijk[3] = {o[0] + (n >> 6), o[1] + ((n >> 3) & 7), o[2] + (n & 7)};
            if ((rc = eng_field_write(eng, s->f, ijk, &vals[n * comps])) != ENG_OK)
                st = pl_from_engine(ctx, rc);
        }
    }
    free(vals);
    return st;
}

static plume_status ckpt_load(plume_context *handle, const char *path, const char *key, int64_t *frame)
{
    pl_context *ctx = pl_context_get(handle);
    if (!ctx)
        return pl_fail(NULL, PLUME_ERR_INVALID_HANDLE, "checkpoint load: invalid context handle");
    if (pl_in_callback(ctx))
        return pl_refuse_in_callback(ctx, "checkpoint load");
    if (!path || !frame)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "checkpoint load: path and frame are required");
    pl_checkpoint_wait(ctx, 0);
    int rc = eng_sync(ctx->eng);
    if (rc)
        return pl_from_engine(ctx, rc);
    plm_vdb_file *file = NULL;
    ckpt_head h;
    plume_status st = open_checkpoint(ctx, path, &file, &h);
    if (st != PLUME_OK)
        return st;
    if (key && strcmp(key, h.key)) {
        st = pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT,
                     "checkpoint %s was written for another scene or other options (its key \"%s\", this "
                     "cook's \"%s\")", path, h.key, key);
        plm_vdb_close(file);
        return st;
    }
    int n = plm_vdb_grid_count(file);
    grid_spec *specs = calloc((size_t)(n ? n : 1), sizeof *specs);
    if (!specs) {
        plm_vdb_close(file);
        return pl_fail(ctx, PLUME_ERR_INTERNAL, "out of host memory");
    }
    /* Everything is checked before the first field changes. */
    for (int i = 0; i < n && st == PLUME_OK; i++) {
        st = read_spec(ctx, path, plm_vdb_file_grid(file, i), &specs[i]);
        for (int j = 0; j < i && st == PLUME_OK; j++)
            if (!strcmp(specs[j].d.name, specs[i].d.name))
                st = pl_fail(ctx, PLUME_ERR_IO, "checkpoint %s holds field '%s' twice", path, specs[i].d.name);
        if (st == PLUME_OK && (specs[i].f = eng_field_find(ctx->eng, specs[i].d.name)))
            st = check_match(ctx, path, &specs[i]);
    }
    for (int i = 0; i < eng_field_count(ctx->eng) && st == PLUME_OK; i++) {
        const char *name = eng_field_info(eng_field_at(ctx->eng, i))->name;
        int found = 0;
        for (int j = 0; j < n && !found; j++)
            found = !strcmp(specs[j].d.name, name);
        if (!found)
            st = pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT,
                         "checkpoint %s has no field '%s': it was written for another scene", path, name);
    }
    for (int i = 0; i < n && st == PLUME_OK; i++)
        st = restore(ctx, path, &specs[i]);
    if (st == PLUME_OK) {
        *frame = h.frame;
        if (ctx->writes) /* the frames after it are cooked again: their files too */
            pl_wq_rewind(ctx->writes, ctx);
        /* the scratch fields are the checkpoint's now, whoever made them before */
        pl_context_forget_retired(ctx);
    }
    free(specs);
    plm_vdb_close(file);
    return st;
}

const plume_ext_checkpoint pl_ext_checkpoint = {sizeof pl_ext_checkpoint, ckpt_save, ckpt_info, ckpt_load,
                                                ckpt_save_begin, ckpt_save_finish};
