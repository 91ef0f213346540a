/* The sfg_ir_ops table over bound tasks (sfg.h): thin adapters to the passes. */
#include "engine/passes/passes_internal.h"
#include "engine/sfg/sfg_ir_meta.h"

#include <stdlib.h>

static uint64_t op_hash(void *ud, const void *ir)
{
    (void)ud;
    return passes_bound_hash(ir);
}

static int op_meta(void *ud, const void *ir, sfg_task_meta *out)
{
    (void)ud;
    /* the bank is single-threaded and the bound task is ours: its scratch buffer may change */
    passes_bound *b = (passes_bound *)ir;
    if (!b || !b->task)
        return SFG_EINVAL;
    if (!b->task->has_meta && pass_compute_meta(b->task) != 0)
        return SFG_ENOMEM;
    uint32_t need = b->task->meta.naccess ? b->task->meta.naccess : 1;
    if (b->meta_cap < need) {
        void *g = realloc(b->meta_buf, need * sizeof(sfg_access));
        if (!g)
            return SFG_ENOMEM;
        b->meta_buf = g;
        b->meta_cap = need;
    }
    uint32_t trees[PASSES_MAX_SLOTS];
    for (uint32_t i = 0; i < b->nfields && i < PASSES_MAX_SLOTS; i++)
        trees[i] = pass_tree_id(b, i);
    sfg_ir_binding bind = {b->field_id, b->nfields, b->gtmp_state, trees};
    int rc = sfg_meta_from_ir(&b->task->meta, &bind, b->meta_buf, b->meta_cap, out);
    if (rc == SFG_OK)
        out->family = ir_task_family_hash(b->task);
    return rc;
}

static void *op_fuse(void *ud, const void *a, const void *b, const sfg_arg_match *m)
{
    (void)ud;
    return passes_fuse(a, b, m);
}

static void *op_demote(void *ud, const void *ir, uint32_t snode)
{
    (void)ud;
    return passes_demote(ir, snode);
}

static void *op_remove_stores(void *ud, const void *ir, sfg_state state, int *empty)
{
    (void)ud;
    return passes_remove_stores(ir, state, empty);
}

static void op_free(void *ud, void *ir)
{
    (void)ud;
    passes_bound_free(ir);
}

sfg_ir_ops passes_sfg_ops(void)
{
    sfg_ir_ops o = {NULL, op_hash, op_meta, op_fuse, op_demote, op_remove_stores, op_free,
                    sizeof(uint64_t) /* engine/launch.c packs one u64 per scalar argument */};
    return o;
}
