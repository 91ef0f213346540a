/* The execution harness of run_env.h (the same steps engine/launch.c takes, minus the SFG). */
#include "run_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/codegen/task.h"
#include "engine/passes/passes.h"
#include "lower_util.h"
#include "sparse/bitcode.h"

static int is_int_field(const char *name)
{
    return !strcmp(name, "n") || !strcmp(name, "oi") || !strcmp(name, "oj") ||
           !strcmp(name, "si");
}

int run_reset(run_env *e)
{
    char err[512];
    if (e->tree)
        plm_tree_destroy(e->tree);
    e->tree = NULL;
    if (plm_tree_create(RUN_LAYOUT, 256u << 20, &e->tree, err, sizeof err) != 0) {
        fprintf(stderr, "tree: %s\n", err);
        return -1;
    }
    return 0;
}

int run_init(run_env *e)
{
    memset(e, 0, sizeof *e);
    char err[512];
    jit_config cfg = jit_config_default();
    cfg.compile_threads = 1;
    cfg.runtime_bc = plm_runtime_bc_x86_64;
    cfg.runtime_bc_size = plm_runtime_bc_x86_64_size;
    if (jit_create(&cfg, &e->j, err, sizeof err) != 0) {
        fprintf(stderr, "skipped: the JIT does not start here: %s\n", err);
        return 77;
    }
    return run_reset(e);
}

void run_done(run_env *e)
{
    if (e->j)
        jit_destroy(e->j);
    if (e->tree)
        plm_tree_destroy(e->tree);
}

typedef struct bound {
    plm_runtime *rt[16];
    int32_t rt_field[16];
} bound;

static int run_task(run_env *e, bound *b, ir_task *t, const uint64_t *args)
{
    char err[1024];
    plm_runtime *rt = plm_tree_runtime(e->tree);
    plm_task_ctx ctx = {b->rt, b->rt_field, args};
    int32_t sn = t->fields[t->field].levels[t->level].rt_snode;
    switch (t->kind) {
    case IR_TASK_CLEAR_LIST:
        plm_rt_list_clear(rt, sn);
        return 0;
    case IR_TASK_LISTGEN:
        if (rt->snodes[sn].parent == 0)
            plm_rt_listgen_root(rt);
        plm_rt_listgen(rt, sn);
        return 0;
    case IR_TASK_GC:
        plm_rt_gc(rt, sn);
        return 0;
    default:
        break;
    }
    ir_task *low = NULL;
    if (passes_prepare_codegen(t, &low, err, sizeof err) != 0) {
        fprintf(stderr, "prepare: %s\n", err);
        return -1;
    }
    void *addrs[2] = {0, 0};
    jit_request req;
    if (cg_task_request(low, addrs, NULL, &req, err, sizeof err) != 0 ||
        jit_compile(e->j, &req, err, sizeof err) != 0) {
        fprintf(stderr, "compile '%s': %s\n", low->name, err);
        ir_task_free(low);
        return -1;
    }
    if (low->kind == IR_TASK_SERIAL) {
        ((plm_task_serial_fn)addrs[0])(&ctx);
    } else if (low->kind == IR_TASK_RANGE_FOR) {
        int64_t be[2] = {0, 0};
        ((plm_task_bounds_fn)addrs[1])(&ctx, be);
        /* two chunks, as a pool would: the prologue runs per chunk */
        int64_t mid = be[0] + (be[1] - be[0]) / 2;
        ((plm_task_range_fn)addrs[0])(&ctx, be[0], mid);
        ((plm_task_range_fn)addrs[0])(&ctx, mid, be[1]);
    } else {
        /* a leaf right under the root iterates list(root), which no listgen task makes */
        if (low->level == 0)
            plm_rt_listgen_root(rt);
        int32_t n = plm_rt_list_size(rt, sn);
        ((plm_task_struct_fn)addrs[0])(&ctx, 0, n / 2);
        ((plm_task_struct_fn)addrs[0])(&ctx, n / 2, n);
    }
    ir_task_free(low);
    return 0;
}

int run_kernel(run_env *e, const char *src, const char *kernel, const char *const *fields,
               uint32_t nfields, const uint64_t *scalars, uint32_t nscalars)
{
    char err[1024];
    const plm_layout *L = plm_tree_layout(e->tree);
    ir_field_info fi[16];
    bound b;
    if (nfields > 16 || nscalars + nfields + 1 > 64)
        return -1;
    for (uint32_t i = 0; i < nfields; i++) {
        int id = plm_layout_field(L, fields[i]);
        if (id < 0 || ir_field_info_from_layout(L, id, &fi[i], err, sizeof err) != 0) {
            fprintf(stderr, "field '%s': %s\n", fields[i], id < 0 ? "unknown" : err);
            return -1;
        }
        if (is_int_field(fields[i]))
            fi[i].elem = IR_I32;
        b.rt[i] = plm_tree_runtime(e->tree);
        b.rt_field[i] = id;
    }
    ir_task *k = lt_lower(src, kernel, fi, nfields, err, sizeof err);
    if (!k) {
        fprintf(stderr, "%s: %s\n", kernel, err);
        return -1;
    }
    ir_task **tasks = NULL;
    uint32_t nt = 0;
    int rc = passes_offload(k, &tasks, &nt, err, sizeof err);
    ir_task_free(k);
    if (rc != 0) {
        fprintf(stderr, "%s: offload: %s\n", kernel, err);
        return -1;
    }
    uint64_t args[64] = {0};
    uint64_t *gtmp = NULL;
    if (nscalars)
        memcpy(args, scalars, nscalars * sizeof *args);
    for (uint32_t i = 0; i < nfields; i++)
        args[nscalars + i] = run_f32(RUN_VOXEL_SIZE);
    if (nt && tasks[0]->gtmp_bytes) {
        gtmp = calloc(1, tasks[0]->gtmp_bytes + 8);
        args[tasks[0]->nargs - 1] = (uint64_t)(uintptr_t)gtmp;
    }
    for (uint32_t i = 0; i < nt && rc == 0; i++) {
        rc = run_task(e, &b, tasks[i], args);
        if (rc != 0)
            fprintf(stderr, "%s: task %u failed\n", kernel, i);
    }
    for (uint32_t i = 0; i < nt; i++)
        ir_task_free(tasks[i]);
    free(tasks);
    free(gtmp);
    char msg[256];
    if (rc == 0 && plm_tree_check_error(e->tree, msg, sizeof msg) != 0) {
        fprintf(stderr, "%s: runtime error: %s\n", kernel, msg);
        rc = -1;
    }
    return rc;
}

int run_read(plm_tree *t, const char *field, int32_t x, int32_t y, int32_t z, uint32_t *cells)
{
    float v[4] = {0, 0, 0, 0};
    int id = plm_tree_field(t, field);
    int r = plm_tree_read(t, id, x, y, z, v);
    memcpy(cells, v, sizeof(float) * (size_t)plm_tree_field_components(t, id));
    return r;
}
