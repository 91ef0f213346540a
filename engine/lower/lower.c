/* The entry: checks the field descriptors against the kernel's parameters, makes the kernel
 * task with its argument list (lower.h), binds the parameters and lowers the body. */
#include "engine/lower/lower_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lw_fail(lw *L, pk_loc loc, const char *fmt, ...)
{
    if (L->failed)
        return -1; /* the first message is the one that explains */
    L->failed = 1;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* the place first, as the front end's diagnostics, so that editors and terminals find it */
    snprintf(L->err, L->n, "%s:%u:%u: error: kernel '%s': %s", loc.file ? loc.file : "<input>",
             loc.line, loc.col, L->kernel->name, msg);
    return -1;
}

int lw_oom(lw *L, pk_loc loc) { return lw_fail(L, loc, "out of memory"); }

int lw_component_range(lw *L, const pk_expr *e, long long index)
{
    /* the front end checks literal indices; this one became a constant by folding */
    char type[64];
    return lw_fail(L, e->loc, "component index %lld is out of range for %s", index,
                   pk_type_name(e->lhs->type, type, sizeof type));
}

int lw_check(lw *L, const lw_val *v, pk_loc loc)
{
    for (int i = 0; i < v->n; i++)
        if (!v->c[i])
            return lw_oom(L, loc);
    return L->failed ? -1 : 0;
}

ir_type lw_ir_type(pk_type t)
{
    switch (pk_type_scalar(t).kind) {
    case PK_T_BOOL: return IR_BOOL;
    case PK_T_I32: return IR_I32;
    case PK_T_I64: return IR_I64;
    case PK_T_U32: return IR_U32;
    case PK_T_F32: return IR_F32;
    case PK_T_F64: return IR_F64;
    default: return IR_VOID;
    }
}

lw_bind *lw_var(lw *L, const pk_var *v)
{
    lw_frame *f = L->frame;
    if (!f || v->owner != f->fn || v->slot >= f->fn->nvars)
        return NULL;
    return &f->vars[v->slot];
}

int lw_bind_value(lw *L, const pk_var *v, const lw_val *val, pk_loc loc)
{
    lw_bind *b = lw_var(L, v);
    if (!b)
        return lw_fail(L, loc, "variable '%s' belongs to another function", v->name);
    b->n = val->n;
    if (!L->frame->assigned[v->slot]) {
        b->kind = LB_SSA;
        memcpy(b->c, val->c, sizeof b->c);
        return 0;
    }
    b->kind = LB_ALLOCA;
    ir_type ty = lw_ir_type(v->type);
    for (int i = 0; i < val->n; i++) {
        b->c[i] = ir_alloca(&L->b, ty);
        if (!ir_store(&L->b, b->c[i], val->c[i]))
            return lw_oom(L, loc);
    }
    return 0;
}

int lw_field_slot(lw *L, const pk_var *v, pk_loc loc, uint32_t *slot)
{
    lw_bind *b = lw_var(L, v);
    if (!b || b->kind != LB_FIELD)
        return lw_fail(L, loc, "'%s' is not a field parameter here", v->name);
    *slot = b->slot;
    return 0;
}

static void scan_expr_root(const pk_expr *e, uint8_t *assigned, uint32_t nvars)
{
    while (e && (e->kind == PK_E_SWIZZLE || e->kind == PK_E_COMPONENT))
        e = e->lhs;
    if (e && e->kind == PK_E_VAR && e->var && e->var->slot < nvars)
        assigned[e->var->slot] = 1;
}

void lw_scan_assigned(const pk_stmt *s, uint8_t *assigned, uint32_t nvars)
{
    if (!s)
        return;
    switch (s->kind) {
    case PK_S_BLOCK:
        for (uint32_t i = 0; i < s->nbody; i++)
            lw_scan_assigned(s->body[i], assigned, nvars);
        break;
    case PK_S_ASSIGN:
        scan_expr_root(s->lhs, assigned, nvars);
        break;
    case PK_S_IF:
        lw_scan_assigned(s->then, assigned, nvars);
        lw_scan_assigned(s->els, assigned, nvars);
        break;
    case PK_S_WHILE: case PK_S_FOR_RANGE: case PK_S_FOR_FIELD: case PK_S_FOR_STATIC:
        lw_scan_assigned(s->then, assigned, nvars);
        break;
    default:
        break;
    }
}

uint32_t lower_scalar_arg_count(const pk_func *kernel)
{
    uint32_t n = 0;
    for (uint32_t i = 0; kernel && i < kernel->nparams; i++)
        if (kernel->params[i]->type.kind != PK_T_FIELD)
            n += (uint32_t)pk_type_components(kernel->params[i]->type);
    return n;
}

/* The descriptor of a field<elem, dim> parameter: elem's scalar type and component count. */
static int field_matches(const pk_type *t, const ir_field_info *f, char *why, size_t n)
{
    pk_type elem = pk_type_make(t->elem);
    ir_type want = lw_ir_type(elem);
    int comps = pk_type_components(elem);
    if (f->elem != want || f->components != comps) {
        snprintf(why, n, "%s x%u, the parameter needs %s x%d", ir_type_name(f->elem),
                 f->components, ir_type_name(want), comps);
        return 0;
    }
    if (f->dim != t->dim) {
        snprintf(why, n, "dimension %u, the parameter needs %u", f->dim, t->dim);
        return 0;
    }
    return 1;
}

static int setup(lw *L, const ir_field_info *fields, uint32_t nfields, lw_frame *kf)
{
    const pk_func *k = L->kernel;
    uint32_t nf = 0;
    for (uint32_t i = 0; i < k->nparams; i++)
        if (k->params[i]->type.kind == PK_T_FIELD) {
            const pk_var *v = k->params[i];
            if (nf >= nfields)
                return lw_fail(L, v->loc, "no field descriptor for field parameter '%s' "
                               "(%u given)", v->name, nfields);
            char why[160];
            if (!field_matches(&v->type, &fields[nf], why, sizeof why))
                return lw_fail(L, v->loc, "field descriptor %u ('%s') does not match "
                               "parameter '%s': %s", nf, fields[nf].name, v->name, why);
            nf++;
        }
    if (nf != nfields)
        return lw_fail(L, k->loc, "%u field descriptors for %u field parameters", nfields, nf);
    L->nscalar = lower_scalar_arg_count(k);
    uint32_t nargs = L->nscalar + nfields;
    ir_type *types = calloc(nargs + 1, sizeof *types);
    if (!types)
        return lw_oom(L, k->loc);
    uint32_t a = 0;
    for (uint32_t i = 0; i < k->nparams; i++)
        if (k->params[i]->type.kind != PK_T_FIELD) {
            int c = pk_type_components(k->params[i]->type);
            for (int j = 0; j < c; j++)
                types[a++] = lw_ir_type(k->params[i]->type);
        }
    for (uint32_t i = 0; i < nfields; i++)
        types[a++] = IR_F32;
    L->t = ir_task_new(IR_TASK_KERNEL, k->name, fields, nfields, types, nargs);
    free(types);
    if (!L->t)
        return lw_oom(L, k->loc);
    ir_builder_init(&L->b, L->t);
    /* parameters: scalars are SSA arguments (kernel parameters cannot be assigned) */
    a = 0;
    nf = 0;
    for (uint32_t i = 0; i < k->nparams; i++) {
        const pk_var *v = k->params[i];
        lw_bind *b = &kf->vars[v->slot];
        if (v->type.kind == PK_T_FIELD) {
            b->kind = LB_FIELD;
            b->slot = nf++;
            continue;
        }
        b->kind = LB_SSA;
        b->n = pk_type_components(v->type);
        for (int j = 0; j < b->n; j++, a++)
            if (!(b->c[j] = ir_arg(&L->b, L->t->arg_types[a], a)))
                return lw_oom(L, v->loc);
    }
    return 0;
}

int lower_kernel(const pk_program *prog, const pk_func *kernel, const ir_field_info *fields,
                 uint32_t nfields, ir_task **out, char *err, size_t n)
{
    char dummy[8];
    if (!err || !n) {
        err = dummy;
        n = sizeof dummy;
    }
    err[0] = 0;
    if (!out) {
        snprintf(err, n, "lower: no output");
        return -1;
    }
    *out = NULL;
    if (!prog || !kernel || !kernel->is_kernel || !kernel->body || (nfields && !fields)) {
        snprintf(err, n, "lower: no kernel, or field descriptors missing");
        return -1;
    }
    lw L;
    memset(&L, 0, sizeof L);
    L.prog = prog;
    L.kernel = kernel;
    L.err = err;
    L.n = n;
    lw_frame kf;
    memset(&kf, 0, sizeof kf);
    kf.fn = kernel;
    kf.vars = calloc(kernel->nvars + 1, sizeof *kf.vars);
    kf.assigned = calloc(kernel->nvars + 1, 1);
    kf.simple = 1;
    kf.wrap = -1;
    int rc = -1;
    if (!kf.vars || !kf.assigned) {
        lw_oom(&L, kernel->loc);
        goto done;
    }
    lw_scan_assigned(kernel->body, kf.assigned, kernel->nvars);
    L.frame = &kf;
    if (setup(&L, fields, nfields, &kf) != 0)
        goto done;
    int term = 0;
    if (lw_stmt(&L, kernel->body, &term) != 0)
        goto done;
    char msg[512];
    if (ir_verify(L.t, msg, sizeof msg) != 0) {
        lw_fail(&L, kernel->loc, "internal error, the IR does not verify: %s", msg);
        goto done;
    }
    rc = 0;
done:
    free(kf.vars);
    free(kf.assigned);
    free(L.loops);
    if (rc == 0) {
        *out = L.t;
    } else {
        if (L.t)
            ir_task_free(L.t);
        if (!err[0])
            snprintf(err, n, "kernel '%s': lowering failed", kernel->name);
    }
    return rc;
}
