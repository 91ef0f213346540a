/* Calls are inlined: the callee's body is lowered in a frame of its own, at the call site.
 *
 * A function whose only `return` is the last statement of its body ("simple": every stdlib
 * function) just leaves its value behind. Any other runs inside a one-shot while loop: a
 * return stores its value into the result allocas and breaks out of that loop (through the
 * loops of the function it sits in, see lw_leave), and the body's end breaks too. The checker
 * rejects recursion; a depth limit still guards against it. */
#include "engine/lower/lower_internal.h"

#include <stdlib.h>
#include <string.h>

static uint32_t count_returns(const pk_stmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case PK_S_RETURN:
        return 1;
    case PK_S_BLOCK: {
        uint32_t n = 0;
        for (uint32_t i = 0; i < s->nbody; i++)
            n += count_returns(s->body[i]);
        return n;
    }
    case PK_S_IF:
        return count_returns(s->then) + count_returns(s->els);
    case PK_S_WHILE: case PK_S_FOR_RANGE: case PK_S_FOR_FIELD: case PK_S_FOR_STATIC:
        return count_returns(s->then);
    default:
        return 0;
    }
}

static int is_simple(const pk_func *fn)
{
    const pk_stmt *b = fn->body;
    uint32_t n = count_returns(b);
    if (n == 0)
        return 1;
    return n == 1 && b->kind == PK_S_BLOCK && b->nbody &&
           b->body[b->nbody - 1]->kind == PK_S_RETURN;
}

static int bind_params(lw *L, const pk_expr *e, lw_frame *callee)
{
    const pk_func *fn = e->func;
    /* arguments are evaluated in the caller's frame, left to right, before the body */
    lw_val *vals = calloc(fn->nparams + 1, sizeof *vals);
    if (!vals)
        return lw_oom(L, e->loc);
    int rc = -1;
    for (uint32_t i = 0; i < fn->nparams; i++) {
        const pk_var *p = fn->params[i];
        const pk_expr *a = e->args[i];
        if (p->type.kind == PK_T_FIELD) {
            if (a->kind != PK_E_FIELD_REF ||
                lw_field_slot(L, a->var, a->loc, &callee->vars[p->slot].slot) != 0) {
                lw_fail(L, a->loc, "argument %u must be a field", i + 1);
                goto done;
            }
            callee->vars[p->slot].kind = LB_FIELD;
            continue;
        }
        if (lw_expr(L, a, &vals[i]) != 0)
            goto done;
    }
    lw_frame *caller = L->frame;
    L->frame = callee;
    rc = 0;
    for (uint32_t i = 0; i < fn->nparams && rc == 0; i++)
        if (fn->params[i]->type.kind != PK_T_FIELD)
            rc = lw_bind_value(L, fn->params[i], &vals[i], e->args[i]->loc);
    L->frame = caller;
done:
    free(vals);
    return rc;
}

static int body(lw *L, const pk_expr *e, lw_frame *f, lw_val *out)
{
    const pk_func *fn = e->func;
    int nret = fn->ret.kind == PK_T_VOID ? 0 : pk_type_components(fn->ret);
    if (f->simple) {
        int term = 0;
        if (lw_stmt(L, fn->body, &term) != 0)
            return -1;
        if (f->ret.n != nret)
            return lw_fail(L, fn->loc, "'%s' ends without returning a value", fn->name);
        *out = f->ret;
        return 0;
    }
    ir_type ty = lw_ir_type(fn->ret);
    for (int i = 0; i < nret; i++)
        if (!(f->ret_slot[i] = ir_alloca(&L->b, ty)))
            return lw_oom(L, e->loc);
    ir_stmt *w = ir_while(&L->b);
    if (!w || lw_push_loop(L, w, NULL, 1, 1, e->loc) != 0)
        return lw_oom(L, e->loc);
    f->wrap = L->nloops - 1;
    ir_builder_at_end(&L->b, w->body);
    int term = 0;
    if (lw_stmt(L, fn->body, &term) != 0)
        return -1;
    if (!term && !ir_break(&L->b, w))
        return lw_oom(L, e->loc);
    if (lw_pop_loop(L, e->loc) != 0)
        return -1;
    out->n = nret;
    for (int i = 0; i < nret; i++)
        out->c[i] = ir_load(&L->b, f->ret_slot[i]);
    return 0;
}

int lw_call(lw *L, const pk_expr *e, lw_val *out)
{
    const pk_func *fn = e->func;
    if (!fn || !fn->body || fn->is_kernel || e->nargs != fn->nparams)
        return lw_fail(L, e->loc, "call of something that is not a function");
    if (L->frame->depth >= LW_MAX_INLINE)
        return lw_fail(L, e->loc, "calls nested more than %d deep (recursion?) at '%s'",
                       LW_MAX_INLINE, fn->name);
    lw_frame f;
    memset(&f, 0, sizeof f);
    f.fn = fn;
    f.up = L->frame;
    f.depth = L->frame->depth + 1;
    f.wrap = -1;
    f.simple = is_simple(fn);
    f.vars = calloc(fn->nvars + 1, sizeof *f.vars);
    f.assigned = calloc(fn->nvars + 1, 1);
    int rc = -1;
    if (!f.vars || !f.assigned) {
        lw_oom(L, e->loc);
        goto done;
    }
    lw_scan_assigned(fn->body, f.assigned, fn->nvars);
    if (bind_params(L, e, &f) != 0)
        goto done;
    L->frame = &f;
    rc = body(L, e, &f, out);
    L->frame = f.up;
done:
    free(f.vars);
    free(f.assigned);
    return rc;
}
