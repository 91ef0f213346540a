/* check_call.c — calls: type constructors and casts, builtins, and user functions with
 * overload resolution. */
#include <stdio.h>
#include <string.h>

#include "engine/lang/check.h"

static pk_type T(int kind) { return pk_type_make(kind); }
static bool is_err(pk_type t) { return t.kind == PK_T_ERROR; }
static bool is_vecmat(pk_type t) { return pk_is_vector_kind(t.kind) || t.kind == PK_T_MAT3; }
static pk_expr *err(pk_expr *e) {
    e->type = T(PK_T_ERROR);
    return e;
}

static void fix_depth(pk_expr *e) {
    uint16_t d = 0;
    for (uint32_t i = 0; i < e->nargs; i++)
        if (e->args[i]->depth > d)
            d = e->args[i]->depth;
    e->depth = (uint16_t)(d + 1);
}

/* Checks the arguments; returns false when one of them has an error. */
static bool check_args(checker *k, pk_expr *e, int flags) {
    bool ok = true;
    for (uint32_t i = 0; i < e->nargs; i++) {
        e->args[i] = ck_expr(k, e->args[i], flags);
        if (is_err(e->args[i]->type))
            ok = false;
    }
    return ok;
}

static bool arity(checker *k, pk_expr *e, const char *name, uint32_t want) {
    if (e->nargs == want)
        return true;
    pk_error(k->c, e->loc, "wrong number of arguments to '%s': expected %u, found %u", name, want,
             e->nargs);
    return false;
}

/* ------------------------------------------------------------ constructors and casts */

static pk_expr *ck_ctor(checker *k, pk_expr *e) {
    pk_type t = e->ctor_type;
    const char *tn = pk_type_kind_name(t.kind);
    if (!check_args(k, e, 0))
        return err(e);
    if (pk_is_scalar_kind(t.kind)) {
        if (!arity(k, e, tn, 1))
            return err(e);
        pk_expr *a = e->args[0];
        if (t.kind == PK_T_BOOL || a->type.kind == PK_T_BOOL) {
            if (t.kind == PK_T_BOOL && a->type.kind == PK_T_BOOL && !a->untyped)
                return a;
            pk_error(k->c, ck_expr_start(a), "cannot convert %s to %s; %s", a->untyped ? "a number" : ck_tn(k, a->type), tn,
                     t.kind == PK_T_BOOL ? "compare instead, e.g. 'x != 0'" : "use 'b ? 1 : 0'");
            return err(e);
        }
        if (!pk_is_scalar_kind(a->type.kind)) {
            pk_error(k->c, ck_expr_start(a), "cannot convert %s to %s", ck_tn(k, a->type), tn);
            return err(e);
        }
        return ck_convert(k, a, t);
    }
    pk_type el = pk_type_scalar(t);
    int want = pk_type_components(t);
    if (e->nargs == 1) {
        pk_expr *a = e->args[0];
        if (pk_is_scalar_kind(a->type.kind)) {
            if (a->type.kind == PK_T_BOOL) {
                pk_error(k->c, a->loc, "cannot build %s from bool", tn);
                return err(e);
            }
            a = ck_convert(k, a, el);
            if (t.kind == PK_T_MAT3) {
                e->kind = PK_E_CONSTRUCT; /* the diagonal matrix */
                e->args[0] = a;
                e->type = t;
                fix_depth(e);
                return e;
            }
            e->kind = PK_E_SPLAT;
            e->lhs = a;
            e->args = NULL;
            e->nargs = 0;
            e->type = t;
            e->depth = (uint16_t)(a->depth + 1);
            return e;
        }
        if (pk_type_components(a->type) == want && is_vecmat(a->type))
            return ck_convert(k, a, t);
    }
    int total = 0;
    for (uint32_t i = 0; i < e->nargs; i++) {
        pk_expr *a = e->args[i];
        if (pk_is_scalar_kind(a->type.kind) && a->type.kind != PK_T_BOOL) {
            e->args[i] = ck_convert(k, a, el);
            total++;
        } else if (pk_is_vector_kind(a->type.kind) && pk_type_scalar(a->type).kind == el.kind) {
            total += pk_type_components(a->type);
        } else if (pk_is_vector_kind(a->type.kind)) {
            pk_error(k->c, a->loc, "cannot build %s from %s; convert it first", tn,
                     ck_tn(k, a->type));
            return err(e);
        } else {
            pk_error(k->c, a->loc, "cannot build %s from %s", tn, ck_tn(k, a->type));
            return err(e);
        }
    }
    if (total != want) {
        pk_error(k->c, e->loc, "%s needs %d components, found %d", tn, want, total);
        return err(e);
    }
    e->kind = PK_E_CONSTRUCT;
    e->type = t;
    fix_depth(e);
    return e;
}

/* ------------------------------------------------------------ builtins */

static pk_expr *field_arg(checker *k, pk_expr *e, const char *name) {
    pk_expr *a = ck_expr(k, e->args[0], CK_FIELD_OK);
    e->args[0] = a;
    if (is_err(a->type))
        return NULL;
    if (a->kind != PK_E_FIELD_REF) {
        pk_error(k->c, a->loc, "the first argument of '%s' must be a field, found %s", name,
                 ck_tn(k, ck_finalize(k, a)->type));
        return NULL;
    }
    if (a->var->type.dim == 0) {
        pk_error(k->c, a->loc, "'%s' needs a field of dimension 1, 2 or 3; '%s' is 0-D", name,
                 a->var->name);
        return NULL;
    }
    return a;
}

static pk_expr *ck_builtin(checker *k, pk_expr *e, int b) {
    const char *name = pk_builtin_name(b);
    char what[64];
    snprintf(what, sizeof what, "arguments to '%s'", name);
    e->kind = PK_E_BUILTIN;
    e->builtin = (uint16_t)b;
    switch (b) {
    case PK_B_IS_ACTIVE:
    case PK_B_ACTIVATE:
    case PK_B_DEACTIVATE: {
        if (!arity(k, e, name, 2))
            return err(e);
        pk_expr *f = field_arg(k, e, name);
        if (!f)
            return err(e);
        char w[64];
        snprintf(w, sizeof w, "the index of '%s'", f->var->name);
        e->args[1] = ck_expr_to(k, e->args[1], pk_field_index_type(f->var->type.dim), w);
        if (is_err(e->args[1]->type))
            return err(e);
        ck_mark_field(k, f->var, b == PK_B_IS_ACTIVE ? PK_ACCESS_READ
                                 : b == PK_B_ACTIVATE ? PK_ACCESS_ACTIVATE : PK_ACCESS_DEACTIVATE);
        e->type = T(b == PK_B_IS_ACTIVE ? PK_T_BOOL : PK_T_VOID);
        fix_depth(e);
        return e;
    }
    case PK_B_VOXEL_SIZE:
        if (!arity(k, e, name, 1) || !field_arg(k, e, name))
            return err(e);
        e->type = T(PK_T_F32);
        fix_depth(e);
        return e;
    default:
        break;
    }
    uint32_t want = b == PK_B_POW || b == PK_B_ATAN2 || b == PK_B_MIN || b == PK_B_MAX ||
                    b == PK_B_DOT || b == PK_B_CROSS ? 2
                    : b == PK_B_CLAMP || b == PK_B_LERP ? 3 : 1;
    if (!arity(k, e, name, want) || !check_args(k, e, 0))
        return err(e);
    pk_expr **a = e->args;
    pk_type t;
    switch (b) {
    case PK_B_POW: case PK_B_ATAN2: case PK_B_LERP:
    case PK_B_MIN: case PK_B_MAX: case PK_B_CLAMP: {
        t = ck_unify(k, a, (int)want, e->loc, what);
        if (is_err(t))
            return err(e);
        bool need_float = b == PK_B_POW || b == PK_B_ATAN2 || b == PK_B_LERP;
        if (need_float && pk_is_int_kind(t.kind))
            t = T(PK_T_F32);
        int el = pk_type_scalar(t).kind;
        if (t.kind == PK_T_MAT3 || el == PK_T_BOOL || (need_float && !pk_is_float_kind(el))) {
            pk_error(k->c, e->loc, "invalid %s: %s", what, ck_tn(k, t));
            return err(e);
        }
        ck_apply(k, a, (int)want, t, what);
        break;
    }
    case PK_B_ABS: case PK_B_SIGN:
        t = ck_finalize(k, a[0])->type;
        if (t.kind == PK_T_U32 || t.kind == PK_T_BOOL || t.kind == PK_T_MAT3 ||
            !(pk_is_numeric_kind(t.kind) || pk_is_vector_kind(t.kind))) {
            pk_error(k->c, a[0]->loc, "'%s' needs a signed number or a vector, found %s", name,
                     ck_tn(k, t));
            return err(e);
        }
        break;
    case PK_B_DOT: case PK_B_CROSS: {
        pk_type x = ck_finalize(k, a[0])->type, y = ck_finalize(k, a[1])->type;
        bool ok = pk_type_eq(x, y) && pk_is_vector_kind(x.kind) &&
                  (b == PK_B_DOT || x.kind == PK_T_VEC3);
        if (!ok) {
            pk_error(k->c, e->loc, "'%s' needs two %s of the same type, found %s and %s", name,
                     b == PK_B_DOT ? "vectors" : "vec3", ck_tn(k, x), ck_tn(k, y));
            return err(e);
        }
        t = b == PK_B_DOT ? pk_type_scalar(x) : x;
        break;
    }
    case PK_B_LENGTH: case PK_B_NORMALIZE:
        t = ck_finalize(k, a[0])->type;
        if (t.kind != PK_T_VEC2 && t.kind != PK_T_VEC3 && t.kind != PK_T_VEC4) {
            pk_error(k->c, a[0]->loc, "'%s' needs a float vector, found %s", name, ck_tn(k, t));
            return err(e);
        }
        if (b == PK_B_LENGTH)
            t = T(PK_T_F32);
        break;
    case PK_B_TRANSPOSE: case PK_B_DETERMINANT:
        t = ck_finalize(k, a[0])->type;
        if (t.kind != PK_T_MAT3) {
            pk_error(k->c, a[0]->loc, "'%s' needs a mat3, found %s", name, ck_tn(k, t));
            return err(e);
        }
        if (b == PK_B_DETERMINANT)
            t = T(PK_T_F32);
        break;
    default: { /* one float argument */
        pk_expr *x = a[0];
        if (x->untyped || pk_is_int_kind(x->type.kind))
            x = a[0] = ck_coerce(k, x, T(PK_T_F32), what);
        t = x->type;
        if (is_err(t))
            return err(e);
        bool ok = pk_is_float_kind(t.kind) || t.kind == PK_T_VEC2 || t.kind == PK_T_VEC3 ||
                  t.kind == PK_T_VEC4;
        if (!ok) {
            pk_error(k->c, x->loc, "'%s' needs a float or a float vector, found %s", name,
                     ck_tn(k, t));
            return err(e);
        }
        break;
    }
    }
    for (uint32_t i = 0; i < e->nargs; i++)
        if (is_err(a[i]->type))
            return err(e);
    e->type = t;
    fix_depth(e);
    return e;
}

/* ------------------------------------------------------------ user functions */

static bool literal_fits(const pk_expr *a, pk_type p) {
    if (a->kind == PK_E_INT)
        return pk_is_numeric_kind(p.kind);
    return pk_is_float_kind(p.kind);
}

/* Cost of passing the arguments to f: -1 when impossible, else lower is better. */
static int match_cost(const pk_expr *e, const pk_func *f) {
    if (f->nparams != e->nargs)
        return -1;
    int cost = 0;
    for (uint32_t i = 0; i < e->nargs; i++) {
        pk_type p = f->params[i]->type;
        const pk_expr *a = e->args[i];
        if (p.kind == PK_T_FIELD) {
            if (a->kind != PK_E_FIELD_REF || !pk_type_eq(a->type, p))
                return -1;
        } else if (a->kind == PK_E_FIELD_REF) {
            return -1;
        } else if (a->untyped) {
            if (!literal_fits(a, p))
                return -1;
            cost += 1;
        } else if (!pk_type_eq(a->type, p)) {
            if (!ck_implicit_ok(a->type, p))
                return -1;
            cost += 2;
        }
    }
    return cost;
}

static const char *signature(checker *k, const pk_func *f) {
    pk_buf b = {0};
    pk_buf_printf(k->c, &b, "%s(", f->name);
    for (uint32_t i = 0; i < f->nparams; i++)
        pk_buf_printf(k->c, &b, "%s%s", i ? ", " : "", ck_tn(k, f->params[i]->type));
    pk_buf_puts(k->c, &b, ")");
    return b.data;
}

static const char *arg_types(checker *k, pk_expr *e) {
    pk_buf b = {0};
    pk_buf_printf(k->c, &b, "%s(", e->name);
    for (uint32_t i = 0; i < e->nargs; i++) {
        pk_expr *a = e->args[i];
        const char *tn = a->untyped ? (a->kind == PK_E_INT ? "integer literal" : "float literal")
                                    : ck_tn(k, a->type);
        pk_buf_printf(k->c, &b, "%s%s", i ? ", " : "", tn);
    }
    pk_buf_puts(k->c, &b, ")");
    return b.data;
}

/* Explains why the only candidate does not accept the call. */
static void explain(checker *k, pk_expr *e, pk_func *f) {
    if (!arity(k, e, f->name, f->nparams))
        return;
    for (uint32_t i = 0; i < e->nargs; i++) {
        pk_type p = f->params[i]->type;
        pk_expr *a = e->args[i];
        char what[96];
        snprintf(what, sizeof what, "argument %u of '%s'", i + 1, f->name);
        if (p.kind == PK_T_FIELD && a->kind != PK_E_FIELD_REF) {
            pk_error(k->c, a->loc, "%s must be a field of type %s", what, ck_tn(k, p));
            return;
        }
        if (p.kind == PK_T_FIELD && !pk_type_eq(a->type, p)) {
            pk_error(k->c, a->loc, "%s must be a field of type %s, found %s", what,
                     ck_tn(k, p), ck_tn(k, a->type));
            return;
        }
        if (a->kind == PK_E_FIELD_REF) {
            pk_error(k->c, a->loc, "field '%s' cannot be used as a value; index it: %s[...]",
                     a->var->name, a->var->name);
            return;
        }
        e->args[i] = ck_coerce(k, a, p, what);
        if (is_err(e->args[i]->type))
            return;
    }
}

static void record_call(checker *k, pk_expr *e, pk_func *f) {
    pk_func *caller = k->fn;
    if (!caller)
        return;
    /* functions are checked one after the other, so a stamp per callee says whether the
     * current caller already lists it */
    if (k->callee_stamp[f->index] != caller->index + 1) {
        k->callee_stamp[f->index] = caller->index + 1;
        /* grow by doubling; capacity is the next power of two of the count */
        uint32_t n = caller->ncallees;
        if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) {
            pk_func **p = pk_alloc(k->c, sizeof(pk_func *) * (n ? n * 2 : 4));
            if (n)
                memcpy(p, caller->callees, n * sizeof(pk_func *));
            caller->callees = p;
        }
        caller->callees[caller->ncallees++] = f;
    }
    if (k->ncalls == k->capcalls) {
        uint32_t ncap = k->capcalls ? k->capcalls * 2 : 32;
        pk_callsite *p = pk_alloc(k->c, ncap * sizeof *p);
        if (k->ncalls)
            memcpy(p, k->calls, k->ncalls * sizeof *p);
        k->calls = p;
        k->capcalls = ncap;
    }
    pk_callsite *cs = &k->calls[k->ncalls++];
    cs->caller = caller;
    cs->callee = f;
    cs->call = e;
    cs->mult = k->unroll;
    cs->parallel = k->region != 0;
}

static pk_expr *ck_user_call(checker *k, pk_expr *e, pk_func *funcs) {
    if (funcs->is_kernel) {
        pk_error(k->c, e->loc, "kernel '%s' cannot be called; only functions can", e->name);
        return err(e);
    }
    if (!check_args(k, e, CK_FIELD_OK))
        return err(e);
    pk_func *best = NULL;
    int best_cost = -1, nbest = 0, ncand = 0;
    for (pk_func *f = funcs; f; f = f->next_overload) {
        ncand++;
        int cost = match_cost(e, f);
        if (cost < 0)
            continue;
        if (!best || cost < best_cost) {
            best = f;
            best_cost = cost;
            nbest = 1;
        } else if (cost == best_cost) {
            nbest++;
        }
    }
    if (!best) {
        if (ncand == 1) {
            explain(k, e, funcs);
        } else {
            pk_error(k->c, e->loc, "no matching function for call to '%s'", arg_types(k, e));
            for (pk_func *f = funcs; f; f = f->next_overload)
                pk_note(k->c, f->loc, "candidate: %s", signature(k, f));
        }
        return err(e);
    }
    if (nbest > 1) {
        pk_error(k->c, e->loc, "call to '%s' is ambiguous", arg_types(k, e));
        for (pk_func *f = funcs; f; f = f->next_overload)
            if (match_cost(e, f) == best_cost)
                pk_note(k->c, f->loc, "candidate: %s", signature(k, f));
        return err(e);
    }
    for (uint32_t i = 0; i < e->nargs; i++) {
        pk_type p = best->params[i]->type;
        if (p.kind != PK_T_FIELD) {
            char what[96];
            snprintf(what, sizeof what, "argument %u of '%s'", i + 1, best->name);
            e->args[i] = ck_coerce(k, e->args[i], p, what);
        }
    }
    e->kind = PK_E_CALL;
    e->func = best;
    e->type = best->ret;
    fix_depth(e);
    record_call(k, e, best);
    return e;
}

pk_expr *ck_call(checker *k, pk_expr *e) {
    if (e->ctor_type.kind)
        return ck_ctor(k, e);
    pk_name *n = pk_intern(k->c, e->name, strlen(e->name));
    if (n->builtin)
        return ck_builtin(k, e, n->builtin);
    pk_func *fs = ck_global_funcs(k, n);
    if (fs)
        return ck_user_call(k, e, fs);
    if (n->local || ck_global_const(k, n))
        pk_error(k->c, e->loc, "'%s' is not a function", e->name);
    else
        pk_error(k->c, e->loc, "unknown function '%s'", e->name);
    return err(e);
}
