/* What the code generator consumes: a lowered, optimized, verified copy of a task. The SFG's
 * bank keeps tasks unlowered (its ops and the metadata work on global_ptr form), so lowering
 * happens here, once per distinct task, when the executor first meets it. */
#include "engine/passes/passes_internal.h"
#if PLUME_HAVE_OPT
#include "engine/opt/opt.h"
#endif

#include <stdio.h>

int passes_prepare_codegen(const ir_task *t, ir_task **out, char *err, size_t n)
{
    char dummy[8];
    if (!err || !n) {
        err = dummy;
        n = sizeof dummy;
    }
    if (!t || !out) {
        snprintf(err, n, "prepare_codegen: no task or output");
        return -1;
    }
    *out = NULL;
    if (t->kind != IR_TASK_SERIAL && t->kind != IR_TASK_RANGE_FOR &&
        t->kind != IR_TASK_STRUCT_FOR) {
        snprintf(err, n, "prepare_codegen '%s': task kind %u has no code", t->name, t->kind);
        return -1;
    }
    ir_task *c = pass_clone(t);
    if (!c) {
        snprintf(err, n, "prepare_codegen '%s': out of memory", t->name);
        return -1;
    }
    uint32_t demoted;
    if (pass_demote_atomics(c, &demoted) != 0) {
        snprintf(err, n, "prepare_codegen '%s': out of memory", t->name);
        goto fail;
    }
    if (passes_lower_access(c, err, n) != 0)
        goto fail;
#if PLUME_HAVE_OPT
    if (opt_run(c, 0, NULL, NULL, err, n) != 0)
        goto fail;
#endif
    /* chains of accesses whose values were unused (e.g. after DSE) go here at the latest */
    pass_drop_dead(c);
    if (ir_verify(c, err, n) != 0)
        goto fail;
    *out = c;
    return 0;
fail:
    ir_task_free(c);
    return -1;
}
