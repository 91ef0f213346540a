/* Offloaded and lowered kernels run for real: passes_offload -> passes_prepare_codegen ->
 * the code generator's CPU JIT, on a sparse tree with the default volume layout; results are
 * compared voxel by voxel with the same computation done through plm_tree_read/write on a
 * second tree. Exercises activation through pointer levels, background reads of inactive
 * neighbours, list generation for a struct_for, a demoted write at the loop index, is_active, deactivation + gc, and a value
 * carried from a serial task to a range_for through the global temporaries. */
#include "tests/check.h"
#include "engine/codegen/jit.h"
#include "engine/codegen/task.h"
#include "engine/passes/passes.h"
#include "pass_util.h"
#include "sparse/bitcode.h"
#include "sparse/tree.h"

#define LAYOUT PLM_LAYOUT_DEFAULT ".place(a, b)"

typedef struct env {
    jit *j;
    plm_tree *tree;
    plm_runtime *rt;
    ir_field_info fi[2];
    int32_t rt_field[2];
} env;

static int run_task(env *e, ir_task *t, const uint64_t *args)
{
    char err[512];
    int32_t sn = t->fields[t->field].levels[t->level].rt_snode;
    plm_runtime *rts[2] = {e->rt, e->rt};
    plm_task_ctx ctx = {rts, e->rt_field, args};
    switch (t->kind) {
    case IR_TASK_CLEAR_LIST:
        plm_rt_list_clear(e->rt, sn);
        return 0;
    case IR_TASK_LISTGEN:
        if (e->rt->snodes[sn].parent == 0)
            plm_rt_listgen_root(e->rt);
        plm_rt_listgen(e->rt, sn);
        return 0;
    case IR_TASK_GC:
        plm_rt_gc(e->rt, sn);
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
        int32_t n = plm_rt_list_size(e->rt, sn);
        ((plm_task_struct_fn)addrs[0])(&ctx, 0, n / 2);
        ((plm_task_struct_fn)addrs[0])(&ctx, n / 2, n);
    }
    ir_task_free(low);
    return 0;
}

static int run_kernel(env *e, ir_task *k, const uint64_t *user_args, uint32_t nuser)
{
    ir_task **tasks = NULL;
    uint32_t nt = 0;
    char err[512];
    if (passes_offload(k, &tasks, &nt, err, sizeof err) != 0) {
        fprintf(stderr, "offload: %s\n", err);
        return -1;
    }
    uint64_t args[16] = {0};
    uint64_t gtmp[8] = {0};
    for (uint32_t i = 0; i < nuser; i++)
        args[i] = user_args[i];
    if (nt && tasks[0]->gtmp_bytes) {
        CHECK(tasks[0]->gtmp_bytes <= sizeof gtmp);
        args[tasks[0]->nargs - 1] = (uint64_t)(uintptr_t)gtmp;
    }
    int rc = 0;
    for (uint32_t i = 0; i < nt && !rc; i++)
        rc = run_task(e, tasks[i], args);
    for (uint32_t i = 0; i < nt; i++)
        ir_task_free(tasks[i]);
    free(tasks);
    ir_task_free(k);
    return rc;
}

static ir_stmt *c32(ir_builder *b, int v) { return ir_const_i32(b, v); }

/* a[(37 i) % 300 - 150, i - 100, 7] = i + 1 for i in [0, 200) */
static ir_task *k_scatter(env *e)
{
    ir_task *k = ir_task_new(IR_TASK_KERNEL, "scatter", e->fi, 2, NULL, 0);
    ir_builder b;
    ir_builder_init(&b, k);
    ir_stmt *lo = c32(&b, 0);
    ir_stmt *loop = ir_range_for(&b, lo, c32(&b, 200), 1);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *i = ir_loop_index(&b, loop, 0);
    ir_stmt *m = ir_binary(&b, IR_MUL, i, c32(&b, 37));
    ir_stmt *x = ir_binary(&b, IR_SUB, ir_binary(&b, IR_MOD, m, c32(&b, 300)), c32(&b, 150));
    ir_stmt *y = ir_binary(&b, IR_SUB, i, c32(&b, 100));
    ir_stmt *I[3] = {x, y, c32(&b, 7)};
    ir_stmt *p = ir_global_ptr(&b, 0, 0, I);
    ir_stmt *v = ir_binary(&b, IR_ADD, ir_cast(&b, IR_F32, i), ir_const_float(&b, IR_F32, 1.0));
    ir_global_store(&b, p, v);
    return k;
}

/* for (I in a) b[I] = a[I] * 2 + a[I + (1,0,0)] */
static ir_task *k_stencil(env *e)
{
    ir_task *k = ir_task_new(IR_TASK_KERNEL, "stencil", e->fi, 2, NULL, 0);
    ir_builder b;
    ir_builder_init(&b, k);
    ir_stmt *loop = ir_struct_for(&b, 0);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *I[3], *J[3];
    for (int a = 0; a < 3; a++)
        I[a] = J[a] = ir_loop_index(&b, loop, (uint32_t)a);
    J[0] = ir_binary(&b, IR_ADD, I[0], c32(&b, 1));
    ir_stmt *c = ir_global_load(&b, ir_global_ptr(&b, 0, 0, I));
    ir_stmt *r = ir_global_load(&b, ir_global_ptr(&b, 0, 0, J));
    ir_stmt *v = ir_binary(&b, IR_ADD, ir_binary(&b, IR_MUL, c, ir_const_float(&b, IR_F32, 2.0)), r);
    ir_global_store(&b, ir_global_ptr(&b, 1, 0, I), v);
    return k;
}

/* for (I in a) a[I] = a[I] * 3: the write at the loop index is demoted (no activation) */
static ir_task *k_triple(env *e)
{
    ir_task *k = ir_task_new(IR_TASK_KERNEL, "triple", e->fi, 2, NULL, 0);
    ir_builder b;
    ir_builder_init(&b, k);
    ir_stmt *loop = ir_struct_for(&b, 0);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *I[3];
    for (int a = 0; a < 3; a++)
        I[a] = ir_loop_index(&b, loop, (uint32_t)a);
    ir_stmt *p = ir_global_ptr(&b, 0, 0, I);
    ir_stmt *v = ir_binary(&b, IR_MUL, ir_global_load(&b, p), ir_const_float(&b, IR_F32, 3.0));
    ir_global_store(&b, p, v);
    return k;
}

/* serial: b[P + (0,0,8)] = is_active(a[P]) ? 5 : 9 (another block); keep = a[P]; deactivate a[P]
 * (and with it b's values in that block: a and b share their blocks); then, keep carried through gtmp:
 * for i in [0, 4): b[i, 0, 0] = keep + i */
static ir_task *k_kill(env *e)
{
    ir_type at[3] = {IR_I32, IR_I32, IR_I32};
    ir_task *k = ir_task_new(IR_TASK_KERNEL, "kill", e->fi, 2, at, 3);
    ir_builder b;
    ir_builder_init(&b, k);
    ir_stmt *P[3], *Q[3];
    for (int a = 0; a < 3; a++)
        P[a] = Q[a] = ir_arg(&b, IR_I32, (uint32_t)a);
    Q[2] = ir_binary(&b, IR_ADD, P[2], c32(&b, 8));
    ir_stmt *act = ir_field_op(&b, IR_IS_ACTIVE, 0, P);
    ir_stmt *five = ir_const_float(&b, IR_F32, 5.0);
    ir_stmt *sel = ir_select(&b, act, five, ir_const_float(&b, IR_F32, 9.0));
    ir_global_store(&b, ir_global_ptr(&b, 1, 0, Q), sel);
    ir_stmt *keep = ir_global_load(&b, ir_global_ptr(&b, 0, 0, P));
    ir_field_op(&b, IR_DEACTIVATE, 0, P);
    ir_stmt *lo = c32(&b, 0);
    ir_stmt *loop = ir_range_for(&b, lo, c32(&b, 4), 1);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *i = ir_loop_index(&b, loop, 0);
    ir_stmt *z = c32(&b, 0);
    ir_stmt *R[3] = {i, z, z};
    ir_stmt *v = ir_binary(&b, IR_ADD, keep, ir_cast(&b, IR_F32, i));
    ir_global_store(&b, ir_global_ptr(&b, 1, 0, R), v);
    return k;
}

/* The same three kernels through the tree API. */
static void reference(plm_tree *t, int32_t px, int32_t py, int32_t pz)
{
    for (int i = 0; i < 200; i++) {
        float v = (float)i + 1.0f;
        plm_tree_write(t, 0, (i * 37) % 300 - 150, i - 100, 7, &v);
    }
    for (int32_t x = -160; x < 160; x++)
        for (int32_t y = -112; y < 112; y++)
            for (int32_t z = 0; z < 16; z++) {
                float c, r;
                if (plm_tree_read(t, 0, x, y, z, &c) != 1)
                    continue;
                plm_tree_read(t, 0, x + 1, y, z, &r);
                float v = c * 2.0f + r;
                plm_tree_write(t, 1, x, y, z, &v);
                c *= 3.0f;
                plm_tree_write(t, 0, x, y, z, &c);
            }
    float c;
    float s = plm_tree_read(t, 0, px, py, pz, &c) == 1 ? 5.0f : 9.0f;
    plm_tree_write(t, 1, px, py, pz + 8, &s);
    float keep;
    plm_tree_read(t, 0, px, py, pz, &keep);
    /* the deepest sparse level: pointer(16), whose cells are the 8^3 blocks */
    plm_tree_deactivate(t, plm_layout_block_snode(plm_tree_layout(t), 0), px, py, pz);
    for (int i = 0; i < 4; i++) {
        float v = keep + (float)i;
        plm_tree_write(t, 1, i, 0, 0, &v);
    }
}

int main(void)
{
    env e;
    memset(&e, 0, sizeof e);
    char err[1024];
    plm_tree *ref = NULL;
    if (plm_tree_create(LAYOUT, 64u << 20, &e.tree, err, sizeof err) != 0 ||
        plm_tree_create(LAYOUT, 64u << 20, &ref, err, sizeof err) != 0) {
        fprintf(stderr, "tree: %s\n", err);
        return 1;
    }
    e.rt = plm_tree_runtime(e.tree);
    const plm_layout *L = plm_tree_layout(e.tree);
    for (int f = 0; f < 2; f++) {
        CHECK_EQ(ir_field_info_from_layout(L, f, &e.fi[f], err, sizeof err), 0);
        e.rt_field[f] = f;
    }
    jit_config cfg = jit_config_default();
    cfg.compile_threads = 1;
    cfg.runtime_bc = plm_runtime_bc_x86_64;
    cfg.runtime_bc_size = plm_runtime_bc_x86_64_size;
    if (jit_create(&cfg, &e.j, err, sizeof err) != 0) {
        fprintf(stderr, "jit: %s\n", err);
        return 1;
    }
    /* i = 10: x = 370 % 300 - 150 = -80, y = -90, z = 7 (written, active) */
    const int32_t P[3] = {-80, -90, 7};
    uint64_t pa[3] = {(uint64_t)(int64_t)P[0], (uint64_t)(int64_t)P[1], (uint64_t)(int64_t)P[2]};
    CHECK_EQ(run_kernel(&e, k_scatter(&e), NULL, 0), 0);
    CHECK_EQ(run_kernel(&e, k_stencil(&e), NULL, 0), 0);
    CHECK_EQ(run_kernel(&e, k_triple(&e), NULL, 0), 0);
    CHECK_EQ(run_kernel(&e, k_kill(&e), pa, 3), 0);
    reference(ref, P[0], P[1], P[2]);
    CHECK_EQ(plm_rt_error(e.rt), 0);

    long mismatches = 0, active = 0;
    for (int f = 0; f < 2; f++)
        for (int32_t x = -160; x < 160; x++)
            for (int32_t y = -112; y < 112; y++)
                for (int32_t z = 0; z < 16; z++) {
                    float u, w;
                    int au = plm_tree_read(e.tree, f, x, y, z, &u);
                    int aw = plm_tree_read(ref, f, x, y, z, &w);
                    active += aw == 1;
                    if (au != aw || memcmp(&u, &w, sizeof u) != 0) {
                        if (mismatches++ < 5)
                            fprintf(stderr, "field %d (%d,%d,%d): jit %d %g, ref %d %g\n", f,
                                    x, y, z, au, u, aw, w);
                    }
                }
    CHECK_EQ(mismatches, 0);
    CHECK(active > 1000); /* the comparison covered real work */
    float v;
    CHECK_EQ(plm_tree_read(e.tree, 0, P[0], P[1], P[2], &v), 0); /* deactivated */
    CHECK_EQ(plm_tree_read(e.tree, 1, P[0], P[1], P[2], &v), 0); /* its block went too */
    CHECK_EQ(plm_tree_read(e.tree, 1, P[0], P[1], P[2] + 8, &v), 1);
    CHECK(v == 5.0f);
    CHECK_EQ(plm_tree_read(e.tree, 1, 2, 0, 0, &v), 1);
    CHECK(v == 35.0f); /* a[P] = (10 + 1) * 3, carried, + 2 */
    jit_destroy(e.j);
    plm_tree_destroy(e.tree);
    plm_tree_destroy(ref);
    CHECK_DONE();
}
