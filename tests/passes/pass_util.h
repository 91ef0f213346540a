/* Shared by the passes tests: hand-made field descriptors and printing helpers that make golden
 * comparisons independent of how the printer shows a gtmp_ptr's argument number (the tests
 * check that number separately, on the statements). */
#ifndef PLUME_TESTS_PASSES_PASS_UTIL_H
#define PLUME_TESTS_PASSES_PASS_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ir/ir.h"

/* A field whose chain is given as kinds and log2 sizes (same size on each of `dim` axes). */
static inline ir_field_info mk_field(const char *name, int dim, int comps, int nlev,
                                     const int *kinds, const int *log2)
{
    ir_field_info f;
    memset(&f, 0, sizeof f);
    snprintf(f.name, sizeof f.name, "%s", name);
    f.elem = IR_F32;
    f.components = (uint8_t)comps;
    f.dim = (uint8_t)dim;
    f.nlevels = (uint8_t)(nlev + 1);
    f.levels[0].kind = IR_KIND_ROOT;
    f.levels[0].rt_snode = 0;
    for (int l = 1; l <= nlev; l++) {
        f.levels[l].kind = (uint8_t)kinds[l - 1];
        for (int a = 0; a < dim; a++)
            f.levels[l].log2_size[a] = (uint8_t)log2[l - 1];
        f.levels[l].rt_snode = l;
    }
    return f;
}

/* The default volume layout: pointer(32).pointer(16).dense(8) over 3 axes. */
static inline ir_field_info vdb_field(const char *name)
{
    static const int k[] = {IR_KIND_POINTER, IR_KIND_POINTER, IR_KIND_DENSE};
    static const int s[] = {5, 4, 3};
    return mk_field(name, 3, 1, 3, k, s);
}

/* One dense level of 2^log2 cells along one axis. */
static inline ir_field_info dense1(const char *name, int log2)
{
    static const int k[] = {IR_KIND_DENSE};
    int s[] = {log2};
    return mk_field(name, 1, 1, 1, k, s);
}

/* A 0-D field: one dense level of one cell. */
static inline ir_field_info scalar0(const char *name)
{
    static const int k[] = {IR_KIND_DENSE};
    static const int s[] = {0};
    return mk_field(name, 0, 1, 1, k, s);
}

/* Printed task with every "gtmp_ptr T <anything> +N" shown as "gtmp_ptr T +N". malloc'd. */
static inline char *print_norm(ir_task *t)
{
    char *txt = ir_print_task(t);
    if (!txt)
        return NULL;
    char *out = malloc(strlen(txt) + 1), *o = out;
    for (char *line = txt; *line;) {
        char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line + 1) : strlen(line);
        char *g = strstr(line, "= gtmp_ptr ");
        if (g && g < line + len) {
            char *ty = g + strlen("= gtmp_ptr ");
            char *sp = strchr(ty, ' ');
            char *plus = strstr(ty, " +");
            memcpy(o, line, (size_t)(sp - line));
            o += sp - line;
            size_t rest = len - (size_t)(plus - line);
            /* keep " +N" only (the offset), drop anything printed after it on the line */
            size_t k = 2;
            while (k < rest && plus[k] >= '0' && plus[k] <= '9')
                k++;
            memcpy(o, plus, k);
            o += k;
            *o++ = '\n';
        } else {
            memcpy(o, line, len);
            o += len;
        }
        line += len;
    }
    *o = 0;
    free(txt);
    return out;
}

/* Every gtmp_ptr of the task names argument `arg`: 1, else 0. */
static int gtmp_arg_visit(ir_stmt *s, void *ud)
{
    const uint32_t *arg = ud;
    return s->op == IR_GTMP_PTR && s->index != *arg;
}

static inline int gtmp_args_are(ir_task *t, uint32_t arg)
{
    return ir_walk(t->body, gtmp_arg_visit, &arg) == 0;
}

#endif
