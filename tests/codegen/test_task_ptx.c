/* Lowered IR tasks through cg_emit_task for NVPTX: kernels marked as entries, grid-stride
 * range loops, one block per list entry for struct_for, atomics, the nvptx64 runtime linked and
 * inlined; the PTX assembles with ptxas for sm_80 and sm_90 (skipped, 77, after the text checks
 * where ptxas is absent). No GPU is needed. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/codegen/ptx.h"
#include "tests/codegen/ptxas_util.h"
#include "tests/codegen/task_util.h"

static ir_task *saxpy_task(plm_tree *tx, plm_tree *ty)
{
    ir_field_info fields[2];
    field_info_from_tree(tx, "x", 1, &fields[0]);
    field_info_from_tree(ty, "y", 1, &fields[1]);
    ir_type args[2] = {IR_F32, IR_I32};
    ir_task *t = ir_task_new(IR_TASK_RANGE_FOR, "saxpy", fields, 2, args, 2);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *loop = ir_range_for(&b, ir_const_i32(&b, 0), ir_arg(&b, IR_I32, 1), 1);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *i = ir_loop_index(&b, loop, 0);
    ir_stmt *py = lowered_ptr(&b, 1, 0, &i, 1);
    ir_global_store(&b, py, ir_binary(&b, IR_ADD, ir_global_load(&b, py),
                                      ir_binary(&b, IR_MUL, ir_arg(&b, IR_F32, 0),
                                                ir_global_load(&b, lowered_ptr(&b, 0, 0, &i, 0)))));
    return t;
}

/* struct_for over the default layout: d[I] = max(d[I], 0) + I.x, and sum += d[I] (atomic). */
static ir_task *struct_task(plm_tree *tree, plm_tree *ts)
{
    ir_field_info fields[2];
    field_info_from_tree(tree, "d", 3, &fields[0]);
    field_info_from_tree(ts, "sum", 0, &fields[1]);
    ir_task *t = ir_task_new(IR_TASK_STRUCT_FOR, "scale", fields, 2, NULL, 0);
    t->field = 0;
    t->level = (uint8_t)(fields[0].nlevels - 2);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *loop = ir_struct_for(&b, 0);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *I[3];
    for (int a = 0; a < 3; a++)
        I[a] = ir_loop_index(&b, loop, (uint32_t)a);
    ir_stmt *p = lowered_ptr(&b, 0, 0, I, 1);
    ir_stmt *v = ir_binary(&b, IR_ADD,
                           ir_binary(&b, IR_MAX, ir_global_load(&b, p), ir_const_float(&b, IR_F32, 0)),
                           ir_cast(&b, IR_F32, I[0]));
    ir_global_store(&b, p, v);
    ir_atomic(&b, IR_ATOMIC_ADD, lowered_ptr(&b, 1, 0, NULL, 1), v);
    ir_atomic(&b, IR_ATOMIC_MUL, lowered_ptr(&b, 1, 0, NULL, 1), v); /* a CAS loop */
    return t;
}

/* serial: activating writes through pointer levels, integer div/mod, a while loop. */
static ir_task *serial_task(plm_tree *tree)
{
    ir_field_info fi;
    field_info_from_tree(tree, "d", 3, &fi);
    ir_type args[1] = {IR_I32};
    ir_task *t = ir_task_new(IR_TASK_SERIAL, "fill", &fi, 1, args, 1);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *k = ir_alloca(&b, IR_I32);
    ir_stmt *w = ir_while(&b);
    ir_builder_at_end(&b, w->body);
    ir_stmt *kv = ir_load(&b, k);
    ir_stmt *iff = ir_if(&b, ir_binary(&b, IR_GE, kv, ir_arg(&b, IR_I32, 0)));
    ir_builder_at_end(&b, iff->body);
    ir_break(&b, w);
    ir_builder_at_end(&b, w->body);
    ir_stmt *c[3] = {ir_binary(&b, IR_DIV, kv, ir_const_i32(&b, -3)),
                     ir_binary(&b, IR_MOD, kv, ir_const_i32(&b, 7)), kv};
    ir_global_store(&b, lowered_ptr(&b, 0, 0, c, 1), ir_cast(&b, IR_F32, kv));
    ir_store(&b, k, ir_binary(&b, IR_ADD, kv, ir_const_i32(&b, 1)));
    return t;
}

typedef struct pcase {
    const char *name;
    ir_task *t;
    const char *must[4]; /* substrings the PTX must contain */
} pcase;

int main(int argc, char **argv)
{
    char err[1024];
    const char *ptxas = find_ptxas(argc, argv);
    plm_tree *tx = NULL, *ty = NULL, *tree = NULL, *ts = NULL;
    plm_tree_create("dense(i,64).dense(i,256).place(x)", 1u << 20, &tx, err, sizeof err);
    plm_tree_create("dense(i,64).dense(i,256).place(y)", 1u << 20, &ty, err, sizeof err);
    plm_tree_create(PLM_LAYOUT_DEFAULT ".place(d)", 16u << 20, &tree, err, sizeof err);
    plm_tree_create("dense(i,1).place(sum)", 1u << 20, &ts, err, sizeof err);
    if (!tx || !ty || !tree || !ts) {
        fprintf(stderr, "trees: %s\n", err);
        return 1;
    }
    pcase cases[3] = {
        {"saxpy", saxpy_task(tx, ty),
         {".visible .entry plm_task(", ".visible .entry plm_task_bounds(", "%nctaid.x", "%ntid.x"}},
        {"struct", struct_task(tree, ts),
         {".visible .entry plm_task(", "%ctaid.x", "atom.add.f32", "atom.cas"}},
        {"serial", serial_task(tree), {".visible .entry plm_task(", "%tid.x", "match.any.sync", NULL}},
    };
    int assembled = 0;
    for (int c = 0; c < 3; c++) {
        if (ir_verify(cases[c].t, err, sizeof err) != 0) {
            CHECK_MSG(0, err);
            continue;
        }
        for (int sm = 80; sm <= 90; sm += 10) {
            ptx_options o = ptx_options_default();
            o.sm = sm;
            o.runtime_bc = plm_runtime_bc_nvptx64;
            o.runtime_bc_size = plm_runtime_bc_nvptx64_size;
            char *ptx = NULL;
            if (ptx_emit(&o, cg_task_build_nvptx, cases[c].t, JIT_EMIT_ASM, &ptx, NULL, err,
                         sizeof err) != 0) {
                fprintf(stderr, "%s sm_%d: %s\n", cases[c].name, sm, err);
                CHECK(!"PTX emitted");
                continue;
            }
            for (int m = 0; m < 4 && cases[c].must[m]; m++)
                CHECK_MSG(strstr(ptx, cases[c].must[m]) != NULL, cases[c].must[m]);
            /* the runtime is linked: whatever is called is defined in the module (large
             * runtime functions with several call sites may stay .func) */
            CHECK_MSG(strstr(ptx, ".extern") == NULL, cases[c].name);
            if (ptxas) {
                char log[4096], stem[64];
                snprintf(stem, sizeof stem, "task_%s", cases[c].name);
                int rc = run_ptxas(ptxas, ptx, stem, sm, log, sizeof log);
                CHECK_MSG(rc == 0, log);
                assembled += rc == 0;
            }
            free(ptx);
        }
        ir_task_free(cases[c].t);
    }
    /* the CPU builder on the same kind of task still says what is wrong for NVPTX-only input:
     * a bad target is refused */
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("m", ctx);
    ir_task *t = saxpy_task(tx, ty);
    CHECK(cg_emit_task(ctx, mod, t, "k", (cg_target_kind)7, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "target") != NULL, err);
    ir_task_free(t);
    LLVMDisposeModule(mod);
    /* math is libdevice's: without it a clear error instead of PTX ptxas rejects; with it
     * (the toolkit's, when installed) the __nv_* functions are linked in and no call is left */
    ir_type fa[1] = {IR_I64};
    t = ir_task_new(IR_TASK_SERIAL, "math", NULL, 0, fa, 1);
    t->gtmp_bytes = 8;
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *g = ir_stmt_new(t, IR_GTMP_PTR, IR_PTR(IR_F32));
    g->index = 0;
    ir_emit(&b, g);
    ir_global_store(&b, g, ir_unary(&b, IR_SIN, ir_global_load(&b, g)));
    char *ptx = NULL;
    ptx_options nolib = ptx_options_default();
    nolib.libdevice = NULL;
    CHECK(ptx_emit(&nolib, cg_task_build_nvptx, t, JIT_EMIT_ASM, &ptx, NULL, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "__nv_sinf") && strstr(err, "libdevice"), err);
    ptx_options withlib = ptx_options_default();
    if (withlib.libdevice) {
        CHECK_MSG(ptx_emit(&withlib, cg_task_build_nvptx, t, JIT_EMIT_ASM, &ptx, NULL, err,
                           sizeof err) == 0, err);
        CHECK(ptx && !strstr(ptx, "__nv_sinf") && !strstr(ptx, "call"));
        free(ptx);
    } else {
        printf("libdevice not found at %s: math PTX with libdevice not checked\n",
               PTX_LIBDEVICE_DEFAULT);
    }
    ir_task_free(t);
    LLVMContextDispose(ctx);

    plm_tree_destroy(tx);
    plm_tree_destroy(ty);
    plm_tree_destroy(tree);
    plm_tree_destroy(ts);
    if (atomic_load(&check_failures) == 0 && !ptxas)
        SKIP("ptxas not found (no CUDA toolkit at /usr/local/cuda): task PTX emitted and "
             "checked as text, not assembled");
    printf("ptxas assembled %d task PTX module(s)\n", assembled);
    CHECK_DONE();
}
