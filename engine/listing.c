/* Compiler listings: the same pipeline a launch runs (lower, optimize, offload, prepare for
 * codegen, emit), printed stage by stage instead of run. */
#define _GNU_SOURCE
#include "engine/listing.h"
#include "engine/kernel_internal.h"
#include "engine/codegen/ptx.h"
#include "engine/codegen/task.h"
#include "engine/engine.h"
#include "engine/lang/lang.h"
#include "engine/lower/lower.h"
#include "engine/passes/passes.h"
#include "sparse/bitcode.h"
#include "sparse/layout.h"
#if PLUME_HAVE_OPT
#include "engine/opt/opt.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int eng_default_field_info(int dim, int vec3, ir_field_info *out, char *err, size_t n)
{
    const char *base = eng_default_layout(dim);
    if (!base) {
        snprintf(err, n, "no default layout for dimension %d", dim);
        return -1;
    }
    char text[256];
    snprintf(text, sizeof text, "%s.place(%s)", base, vec3 ? "v:vec3" : "v");
    plm_layout *lay = NULL;
    if (plm_layout_parse(text, &lay, err, n) != 0)
        return -1;
    int rc = ir_field_info_from_layout(lay, plm_layout_field(lay, "v"), out, err, n);
    plm_layout_free(lay);
    return rc;
}

/* The descriptor a field parameter gets from its dimension's default layout. */
static int default_info(const pk_var *v, ir_field_info *out, char *err, size_t n)
{
    if (eng_field_param_check(v, err, n) != 0)
        return -1;
    if (eng_default_field_info(v->type.dim, v->type.elem == PK_T_VEC3, out, err, n) != 0)
        return -1;
    snprintf(out->name, sizeof out->name, "%s", v->name);
    return 0;
}

static int print_task(FILE *f, const char *title, ir_task *t, int meta)
{
    char *s = ir_print_task(t);
    if (!s)
        return -1;
    fprintf(f, "# %s\n%s", title, s);
    free(s);
    if (meta && t->has_meta) {
        char *m = ir_print_meta(t);
        if (!m)
            return -1;
        fprintf(f, "# metadata\n%s", m);
        free(m);
    }
    fputc('\n', f);
    return 0;
}

#if PLUME_HAVE_OPT
typedef struct dump_state {
    FILE *f;
    const char *kernel;
} dump_state;

static void dump_pass(const char *pass, ir_task *t, void *ud)
{
    dump_state *d = ud;
    char title[160];
    snprintf(title, sizeof title, "kernel %s after %s", d->kernel, pass);
    print_task(d->f, title, t, 0);
}
#endif

/* One codegen-ready task as LLVM IR, host assembly or PTX. */
int eng_task_listing(FILE *f, ir_task *low, int kind, char *err, size_t n)
{
    char *text = NULL;
    int rc;
    if (kind == ENG_LIST_PTX || kind == ENG_LIST_PTX_LLVM) {
        ptx_options po = ptx_options_default();
        po.runtime_bc = plm_runtime_bc_nvptx64;
        po.runtime_bc_size = plm_runtime_bc_nvptx64_size;
        rc = ptx_emit(&po, cg_task_build_nvptx, low,
                      kind == ENG_LIST_PTX ? JIT_EMIT_ASM : JIT_EMIT_LLVM, &text, NULL, err, n);
    } else {
        jit_config jc = jit_config_default();
        jc.runtime_bc = plm_runtime_bc_x86_64;
        jc.runtime_bc_size = plm_runtime_bc_x86_64_size;
        const char *syms[2] = {CG_TASK_SYMBOL, CG_TASK_BOUNDS_SYMBOL};
        int nsyms = low->kind == IR_TASK_RANGE_FOR ? 2 : 1;
        rc = jit_emit_text(&jc, cg_task_build, low, syms, nsyms,
                           kind == ENG_LIST_ASM ? JIT_EMIT_ASM : JIT_EMIT_LLVM, &text, err, n);
    }
    if (rc != 0)
        return -1;
    fputs(text, f);
    fputc('\n', f);
    free(text);
    return 0;
}

static const char *kind_name(int k)
{
    static const char *names[] = {"serial", "range_for", "struct_for", "clear_list", "listgen",
                                  "gc", "kernel"};
    return k >= 0 && k <= 6 ? names[k] : "?";
}

static int list_kernel(FILE *f, const pk_program *prog, const pk_func *fn, int kind, char *err,
                       size_t n)
{
    ir_field_info infos[PK_MAX_PARAMS];
    uint32_t nf = 0;
    for (uint32_t p = 0; p < fn->nparams; p++)
        if (fn->params[p]->type.kind == PK_T_FIELD &&
            default_info(fn->params[p], &infos[nf++], err, n) != 0)
            return -1;
    ir_task *kt = NULL;
    if (lower_kernel(prog, fn, infos, nf, &kt, err, n) != 0)
        return -1;
    char title[160];
    int rc = 0;
    /* PTX takes // comments only (ptxas reads a module from the first line) */
    const char *comment = kind == ENG_LIST_PTX ? "//" : ";";
    if (kind == ENG_LIST_IR) {
        snprintf(title, sizeof title, "kernel %s as lowered", fn->name);
        rc = print_task(f, title, kt, 0);
    }
#if PLUME_HAVE_OPT
    dump_state ds = {f, fn->name};
    if (rc == 0 && opt_run(kt, 0, kind == ENG_LIST_IR ? dump_pass : NULL, &ds, err, n) != 0)
        rc = -1;
#endif
    ir_task **tasks = NULL;
    uint32_t nt = 0;
    if (rc == 0 && passes_offload(kt, &tasks, &nt, err, n) != 0)
        rc = -1;
    /* the IR prints at any size; the code generator would take minutes on a huge task */
    if (rc == 0 && kind != ENG_LIST_IR && eng_tasks_size_check(fn, tasks, nt, err, n) != 0)
        rc = -1;
    for (uint32_t i = 0; i < nt && rc == 0; i++) {
        ir_task *t = tasks[i];
        if (kind == ENG_LIST_IR) {
            snprintf(title, sizeof title, "task %s (%s) as offloaded", t->name, kind_name(t->kind));
            rc = print_task(f, title, t, 1);
        }
        if (t->kind != IR_TASK_SERIAL && t->kind != IR_TASK_RANGE_FOR &&
            t->kind != IR_TASK_STRUCT_FOR) {
            if (kind != ENG_LIST_IR)
                fprintf(f, "%s task %s (%s): run by the runtime, no code\n\n", comment, t->name,
                        kind_name(t->kind));
            continue;
        }
        ir_task *low = NULL;
        if (rc == 0 && passes_prepare_codegen(t, &low, err, n) != 0)
            rc = -1;
        if (rc == 0 && kind == ENG_LIST_IR) {
            snprintf(title, sizeof title, "task %s (%s) for the code generator", t->name, kind_name(t->kind));
            rc = print_task(f, title, low, 0);
        } else if (rc == 0) {
            fprintf(f, "%s task %s (%s)\n", comment, t->name, kind_name(t->kind));
            rc = eng_task_listing(f, low, kind, err, n);
        }
        ir_task_free(low);
    }
    for (uint32_t i = 0; i < nt; i++)
        ir_task_free(tasks[i]);
    free(tasks);
    ir_task_free(kt);
    if (rc != 0 && !err[0])
        snprintf(err, n, "out of host memory");
    return rc;
}

int eng_compile_listing(const char *file, const char *src, size_t len, const char *kernel,
                        int kind, char **text, char *err, size_t n)
{
    *text = NULL;
    err[0] = 0;
    pk_result *r = pk_compile(file, src, len, NULL);
    if (!r) {
        snprintf(err, n, "out of host memory");
        return ENG_LIST_EFAIL;
    }
    if (!pk_result_ok(r)) {
        snprintf(err, n, "%s", pk_result_error_text(r));
        size_t k = strlen(err);
        while (k && err[k - 1] == '\n')
            err[--k] = 0;
        pk_result_free(r);
        return ENG_LIST_ESOURCE;
    }
    const pk_program *prog = pk_result_program(r);
    char *buf = NULL;
    size_t blen = 0;
    FILE *f = open_memstream(&buf, &blen);
    int rc = f ? ENG_LIST_OK : ENG_LIST_EFAIL, found = 0;
    for (uint32_t k = 0; k < prog->nkernels && rc == ENG_LIST_OK; k++) {
        const pk_func *fn = prog->kernels[k];
        if (kernel && kernel[0] && strcmp(kernel, fn->name))
            continue;
        found = 1;
        char msg[2048];
        msg[0] = 0;
        if (list_kernel(f, prog, fn, kind, msg, sizeof msg) != 0) {
            eng_error_in_kernel(msg, fn, r, err, n);
            rc = ENG_LIST_EFAIL;
        }
    }
    if (f)
        fclose(f);
    /* A file of functions alone lists nothing, as its check does (the caller warns); a kernel
     * asked for by name must be there. */
    if (rc == ENG_LIST_OK && !found && kernel && kernel[0]) {
        snprintf(err, n, "%s: no kernel named '%s'", file ? file : "<input>", kernel);
        rc = ENG_LIST_ENOTFOUND;
    }
    pk_result_free(r);
    if (rc != ENG_LIST_OK) {
        free(buf);
        return rc;
    }
    *text = buf;
    return ENG_LIST_OK;
}
