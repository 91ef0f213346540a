/* Shared by the lowering tests: hand-made field descriptors, and compiling + lowering one
 * kernel of a source text. */
#ifndef PLUME_TESTS_LOWER_UTIL_H
#define PLUME_TESTS_LOWER_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ir/ir.h"
#include "engine/lang/lang.h"
#include "engine/lower/lower.h"

/* A field of `dim` axes: one dense level of 2^log2 cells per axis (none for dim 0). */
static inline ir_field_info lt_field(const char *name, ir_type elem, int comps, int dim,
                                     int log2)
{
    ir_field_info f;
    memset(&f, 0, sizeof f);
    snprintf(f.name, sizeof f.name, "%s", name);
    f.elem = elem;
    f.components = (uint8_t)comps;
    f.dim = (uint8_t)dim;
    f.nlevels = 2;
    f.levels[0].kind = IR_KIND_ROOT;
    f.levels[1].kind = IR_KIND_DENSE;
    f.levels[1].rt_snode = 1;
    for (int a = 0; a < dim; a++)
        f.levels[1].log2_size[a] = (uint8_t)log2;
    return f;
}

/* Compiles src and lowers kernel `name`; NULL with the reason in err. */
static inline ir_task *lt_lower(const char *src, const char *name, const ir_field_info *fi,
                                uint32_t nf, char *err, size_t n)
{
    pk_options opt = {0};
    opt.no_warnings = 1;
    pk_result *r = pk_compile("t.pk", src, strlen(src), &opt);
    if (!r || !pk_result_ok(r)) {
        snprintf(err, n, "compile: %s", r ? pk_result_text(r) : "out of memory");
        pk_result_free(r);
        return NULL;
    }
    const pk_func *k = pk_find_kernel(pk_result_program(r), name);
    ir_task *t = NULL;
    if (!k)
        snprintf(err, n, "no kernel '%s'", name);
    else if (lower_kernel(pk_result_program(r), k, fi, nf, &t, err, n) != 0)
        t = NULL;
    pk_result_free(r);
    return t;
}

#endif
