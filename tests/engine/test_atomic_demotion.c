/* Atomic demotion in passes_prepare_codegen: an update of f[i] at the loop's own index, with
 * every access of the task to f at that index, becomes a plain load and store; an update that
 * other iterations may also touch (h[i % 10]) or a field also read at a neighbour stays
 * atomic. Checked on the IR the code generator receives. */
#include "engine/engine.h"
#include "engine/lang/lang.h"
#include "engine/listing.h"
#include "engine/lower/lower.h"
#include "engine/passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

/* The code-generator IR of the one range_for task of `kernel`, as text (malloc'd). */
static char *codegen_ir(const char *src, const char *kernel, uint32_t nfields)
{
    pk_result *r = pk_compile("t.pk", src, strlen(src), NULL);
    if (!r || !pk_result_ok(r)) {
        fprintf(stderr, "compile: %s\n", r ? pk_result_text(r) : "out of memory");
        exit(1);
    }
    const pk_program *prog = pk_result_program(r);
    const pk_func *fn = pk_find_kernel(prog, kernel);
    char err[512];
    ir_field_info infos[4];
    for (uint32_t i = 0; i < nfields; i++)
        if (eng_default_field_info(1, 0, &infos[i], err, sizeof err) != 0) {
            fprintf(stderr, "layout: %s\n", err);
            exit(1);
        }
    ir_task *kt = NULL, **tasks = NULL, *low = NULL;
    uint32_t nt = 0;
    if (lower_kernel(prog, fn, infos, nfields, &kt, err, sizeof err) != 0 ||
        passes_offload(kt, &tasks, &nt, err, sizeof err) != 0) {
        fprintf(stderr, "lower/offload: %s\n", err);
        exit(1);
    }
    char *out = NULL;
    for (uint32_t i = 0; i < nt; i++) {
        if (tasks[i]->kind == IR_TASK_RANGE_FOR && !out) {
            if (passes_prepare_codegen(tasks[i], &low, err, sizeof err) != 0) {
                fprintf(stderr, "prepare: %s\n", err);
                exit(1);
            }
            out = ir_print_task(low);
            ir_task_free(low);
        }
        ir_task_free(tasks[i]);
    }
    free(tasks);
    ir_task_free(kt);
    pk_result_free(r);
    return out;
}

static void expect(const char *what, const char *src, const char *kernel, uint32_t nf,
                   int atomic_left)
{
    char *ir = codegen_ir(src, kernel, nf);
    int has = ir && strstr(ir, " atomic") != NULL;
    if (has != atomic_left) {
        fprintf(stderr, "%s: atomic %s, expected %s\n%s\n", what, has ? "kept" : "removed",
                atomic_left ? "kept" : "removed", ir ? ir : "(none)");
        failures++;
    }
    free(ir);
}

int main(void)
{
    expect("x[i] += 1", "kernel k(field<f32, 1> x) { for (i in 0 .. 100) { x[i] += 1.0; } }\n",
           "k", 1, 0);
    expect("x[i] min= y[i]",
           "kernel k(field<f32, 1> x, field<f32, 1> y) { for (i in 0 .. 100) { x[i] min= y[i]; } }\n",
           "k", 2, 0);
    expect("h[i % 10] += 1", "kernel k(field<f32, 1> h) { for (i in 0 .. 100) { h[i % 10] += 1.0; } }\n",
           "k", 1, 1);
    expect("x[i] += x[i + 1]",
           "kernel k(field<f32, 1> x) { for (i in 0 .. 100) { x[i] += x[i + 1]; } }\n", "k", 1, 1);
    if (failures)
        fprintf(stderr, "%d checks failed\n", failures);
    return failures ? 1 : 0;
}
