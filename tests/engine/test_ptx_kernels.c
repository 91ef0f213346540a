/* Every task of the project's kernel files compiles to PTX, and ptxas assembles it for sm_80
 * and sm_90 (issue 8's check without a GPU). Kernels go through the same stages as a launch
 * (lowering, optimizer, offload, access lowering), each field parameter with its dimension's
 * default layout; every serial, range_for and struct_for task is emitted with the nvptx64
 * runtime linked in. Usage: test_engine_ptx_kernels PTXAS FILE.pk...; skips (77) with a
 * message when ptxas is not installed. */
#include "engine/codegen/ptx.h"
#include "engine/codegen/task.h"
#include "engine/engine.h"
#include "engine/lang/lang.h"
#include "engine/listing.h"
#include "engine/lower/lower.h"
#include "engine/passes/passes.h"
#include "engine/exec_cuda.h"
#include "sparse/bitcode.h"
#include "../codegen/ptxas_util.h"
#if PLUME_HAVE_OPT
#include "engine/opt/opt.h"
#endif

#include <stdlib.h>

static int failures, tasks_checked, kernels_skipped;

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf)
        buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

static int field_info(const pk_var *v, ir_field_info *out)
{
    char err[256];
    if (v->type.elem != PK_T_F32 && v->type.elem != PK_T_VEC3)
        return -1;
    return eng_default_field_info(v->type.dim, v->type.elem == PK_T_VEC3, out, err, sizeof err);
}

static void check_kernel(const char *ptxas, const char *file, const pk_program *prog,
                         const pk_func *fn)
{
    ir_field_info infos[PK_MAX_PARAMS];
    uint32_t nf = 0;
    for (uint32_t p = 0; p < fn->nparams; p++)
        if (fn->params[p]->type.kind == PK_T_FIELD && field_info(fn->params[p], &infos[nf++]) != 0) {
            kernels_skipped++; /* field types engine fields cannot hold (i32, f64, vec2) */
            return;
        }
    char err[1024];
    ir_task *kt = NULL, **tasks = NULL;
    uint32_t nt = 0;
    if (lower_kernel(prog, fn, infos, nf, &kt, err, sizeof err) != 0
#if PLUME_HAVE_OPT
        || opt_run(kt, 0, NULL, NULL, err, sizeof err) != 0
#endif
        || passes_offload(kt, &tasks, &nt, err, sizeof err) != 0) {
        fprintf(stderr, "%s: kernel %s: %s\n", file, fn->name, err);
        failures++;
        ir_task_free(kt);
        return;
    }
    for (uint32_t i = 0; i < nt; i++) {
        ir_task *t = tasks[i], *low = NULL;
        if (t->kind == IR_TASK_SERIAL || t->kind == IR_TASK_RANGE_FOR || t->kind == IR_TASK_STRUCT_FOR) {
            if (passes_prepare_codegen(t, &low, err, sizeof err) != 0) {
                fprintf(stderr, "%s: task %s: %s\n", file, t->name, err);
                failures++;
            }
            /* PTX for sm_80 (ISA 7.0) is what the engine emits; ptxas assembles it for sm_80
             * and for sm_90 (Hopper) alike */
            ptx_options po = ptx_options_default();
            po.runtime_bc = plm_runtime_bc_nvptx64;
            po.runtime_bc_size = plm_runtime_bc_nvptx64_size;
            char *ptx = NULL, log[2048];
            if (low && ptx_emit(&po, cg_task_build_nvptx, low, JIT_EMIT_ASM, &ptx, NULL, err, sizeof err) != 0) {
                fprintf(stderr, "%s: task %s: PTX: %s\n", file, t->name, err);
                failures++;
            }
            for (int sm = 80; ptx && sm <= 90; sm += 10) {
                char stem[128];
                snprintf(stem, sizeof stem, "ptx_%s", t->name);
                for (char *c = stem; *c; c++)
                    if (*c == '#')
                        *c = '_';
                if (run_ptxas(ptxas, ptx, stem, sm, log, sizeof log) != 0) {
                    fprintf(stderr, "%s: task %s: ptxas sm_%d rejects it:\n%s\n", file, t->name, sm, log);
                    failures++;
                }
            }
            free(ptx);
            if (low)
                tasks_checked++;
            ir_task_free(low);
        }
        ir_task_free(t);
    }
    free(tasks);
    ir_task_free(kt);
}

int main(int argc, char **argv)
{
    const char *ptxas = find_ptxas(argc, argv);
    if (!ptxas) {
        printf("skip: no ptxas (looked at the argument and /usr/local/cuda/bin/ptxas)\n");
        return 77;
    }
    int files = 0;
    for (int i = 2; i < argc; i++) {
        size_t len = 0;
        char *src = slurp(argv[i], &len);
        if (!src) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            failures++;
            continue;
        }
        pk_result *r = pk_compile(argv[i], src, len, NULL);
        if (!r || !pk_result_ok(r)) {
            fprintf(stderr, "%s does not compile:\n%s\n", argv[i], r ? pk_result_text(r) : "");
            failures++;
        } else {
            const pk_program *prog = pk_result_program(r);
            for (uint32_t k = 0; k < prog->nkernels; k++)
                check_kernel(ptxas, argv[i], prog, prog->kernels[k]);
        }
        files++;
        pk_result_free(r);
        free(src);
    }
    /* the runtime's own GPU kernels, as the executor makes them for an A100 and an H100 */
    for (int sm = 80; sm <= 90; sm += 10) {
        char *ptx = NULL, err[1024], log[2048], stem[32];
        if (eng_cuda_rt_kernels_ptx(sm, &ptx, err, sizeof err) != 0) {
            fprintf(stderr, "runtime GPU kernels for sm_%d: %s\n", sm, err);
            failures++;
            continue;
        }
        static const char *const names[] = {"plm_cuda_k_clear_list", "plm_cuda_k_listgen_root",
                                            "plm_cuda_k_listgen_items",
                                            "plm_cuda_k_listgen_cells", "plm_cuda_k_gc_begin",
                                            "plm_cuda_k_gc_items", "plm_cuda_k_gc_end"};
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            char entry[64];
            snprintf(entry, sizeof entry, ".entry %s(", names[k]);
            if (!strstr(ptx, entry)) {
                fprintf(stderr, "runtime GPU kernels for sm_%d: no entry %s\n", sm, names[k]);
                failures++;
            }
        }
        snprintf(stem, sizeof stem, "ptx_rt_kernels_%d", sm);
        if (run_ptxas(ptxas, ptx, stem, sm, log, sizeof log) != 0) {
            fprintf(stderr, "runtime GPU kernels: ptxas sm_%d rejects them:\n%s\n", sm, log);
            failures++;
        }
        free(ptx);
    }
    printf("%d files, %d tasks assembled for sm_80 and sm_90, %d kernels skipped (field types "
           "engine fields cannot hold), %d failures\n", files, tasks_checked, kernels_skipped, failures);
    if (tasks_checked == 0) {
        fprintf(stderr, "no task was checked\n");
        return 1;
    }
    return failures ? 1 : 0;
}
