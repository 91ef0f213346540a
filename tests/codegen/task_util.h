/* For the task codegen tests: IR field descriptors from a real plm_tree, lowered access chains
 * built with the IR builder, a JIT with the x86_64 runtime linked, and runners that call the
 * task_abi.h entry points the way the executor does (range_for and struct_for through
 * cpu_pool_parallel_for on 2 threads). */
#ifndef PLUME_TESTS_CODEGEN_TASK_UTIL_H
#define PLUME_TESTS_CODEGEN_TASK_UTIL_H

#include <stdio.h>
#include <string.h>

#include "engine/backend/cpu_pool.h"
#include "engine/codegen/jit.h"
#include "engine/codegen/task.h"
#include "engine/codegen/task_abi.h"
#include "engine/ir/ir.h"
#include "sparse/bitcode.h"
#include "sparse/tree.h"
#include "tests/check.h"

/* The descriptor of field `name` of the tree: the SNode chain from the root to its leaf. */
static inline int field_info_from_tree(plm_tree *tree, const char *name, int dim, ir_field_info *fi)
{
    const plm_layout *L = plm_tree_layout(tree);
    int f = plm_layout_field(L, name);
    if (f < 0)
        return -1;
    memset(fi, 0, sizeof *fi);
    snprintf(fi->name, sizeof fi->name, "%s", name);
    fi->elem = IR_F32;
    fi->components = (uint8_t)L->cfg.fields[f].components;
    fi->dim = (uint8_t)dim;
    int chain[IR_MAX_LEVELS], n = 0;
    for (int s = L->cfg.fields[f].snode; s > 0 && n < IR_MAX_LEVELS - 1; s = L->cfg.snodes[s].parent)
        chain[n++] = s;
    fi->nlevels = (uint8_t)(n + 1);
    fi->levels[0].kind = IR_KIND_ROOT;
    fi->levels[0].rt_snode = 0;
    for (int l = 1; l <= n; l++) {
        const plm_rt_snode *s = &L->cfg.snodes[chain[n - l]];
        fi->levels[l].kind = (uint8_t)s->kind; /* PLM_RT_* and IR_KIND_* agree */
        for (int a = 0; a < IR_MAX_DIM; a++)
            fi->levels[l].log2_size[a] = (uint8_t)s->axis_bits[a];
        fi->levels[l].rt_snode = s->id;
    }
    return 0;
}

/* What access lowering produces for field[idx]: root -> (child, index, lookup)* -> field_ptr. */
static inline ir_stmt *lowered_ptr(ir_builder *b, uint32_t slot, uint32_t comp, ir_stmt *const *idx,
                            int activate)
{
    const ir_field_info *fi = &b->task->fields[slot];
    ir_stmt *cell = ir_sn_root(b, slot);
    int leaf = fi->nlevels - 1;
    for (int l = 1; l < leaf; l++) {
        ir_stmt *c = ir_sn_child(b, slot, (uint32_t)l, cell);
        ir_stmt *i = ir_sn_index(b, slot, (uint32_t)l, idx);
        cell = ir_sn_lookup(b, slot, (uint32_t)l, activate, c, i);
    }
    ir_stmt *c = ir_sn_child(b, slot, (uint32_t)leaf, cell);
    ir_stmt *i = ir_sn_index(b, slot, (uint32_t)leaf, idx);
    return ir_sn_field_ptr(b, slot, comp, activate, c, i);
}

static inline jit *make_jit(void)
{
    jit_config cfg = jit_config_default();
    cfg.compile_threads = 1;
    cfg.runtime_bc = plm_runtime_bc_x86_64;
    cfg.runtime_bc_size = plm_runtime_bc_x86_64_size;
    jit *j = NULL;
    char err[1024];
    if (jit_create(&cfg, &j, err, sizeof err) != 0)
        fprintf(stderr, "jit_create: %s\n", err);
    return j;
}

/* Verifies and compiles the task; addrs as cg_task_request describes. */
static inline int compile_task(jit *j, ir_task *t, void *addrs[2])
{
    char err[1024];
    if (ir_verify(t, err, sizeof err) != 0) {
        fprintf(stderr, "ir_verify: %s\n", err);
        char *txt = ir_print_task(t);
        fprintf(stderr, "%s\n", txt ? txt : "");
        free(txt);
        return -1;
    }
    jit_request req;
    if (cg_task_request(t, addrs, NULL, &req, err, sizeof err) != 0 ||
        jit_compile(j, &req, err, sizeof err) != 0) {
        fprintf(stderr, "compile '%s': %s\n", t->name, err);
        return -1;
    }
    return 0;
}

typedef struct range_job {
    plm_task_range_fn fn;
    plm_task_struct_fn sfn;
    const plm_task_ctx *ctx;
    int64_t begin;
} range_job;

static inline void range_chunk(void *p, int64_t lo, int64_t hi, int worker)
{
    (void)worker;
    range_job *r = p;
    if (r->fn)
        r->fn(r->ctx, r->begin + lo, r->begin + hi);
    else
        r->sfn(r->ctx, (int32_t)lo, (int32_t)hi);
}

/* S_bounds, then S over sub-ranges on the pool. Returns the number of iterations. */
static inline int64_t run_range(cpu_pool *pool, void *addrs[2], const plm_task_ctx *ctx, int64_t grain)
{
    int64_t b[2] = {-1, -1};
    ((plm_task_bounds_fn)addrs[1])(ctx, b);
    range_job r = {(plm_task_range_fn)addrs[0], NULL, ctx, b[0]};
    char err[256];
    if (b[1] > b[0] && cpu_pool_parallel_for(pool, b[1] - b[0], grain, range_chunk, &r, err,
                                             sizeof err) != 0)
        fprintf(stderr, "pool: %s\n", err);
    return b[1] - b[0];
}

/* Generates the lists down to list_snode, then S over the entries on the pool. */
static inline int64_t run_struct(cpu_pool *pool, plm_tree *tree, int list_snode, void *addrs[2],
                          const plm_task_ctx *ctx)
{
    int64_t n = plm_tree_listgen(tree, list_snode, 2);
    range_job r = {NULL, (plm_task_struct_fn)addrs[0], ctx, 0};
    char err[256];
    if (n > 0 && cpu_pool_parallel_for(pool, n, 1, range_chunk, &r, err, sizeof err) != 0)
        fprintf(stderr, "pool: %s\n", err);
    return n;
}

#endif
