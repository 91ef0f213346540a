/* check.c — the checker's driver: top-level names (overloads, clashes with the standard
 * library and builtins), constants, function signatures, statements and scopes, then the
 * whole-program passes: recursion, size after inlining and unrolling, and the propagation of
 * field accesses through calls. */
#include <stdio.h>
#include <string.h>

#include "engine/lang/check.h"

enum {
    MAX_EXPANDED = 4 * 1000 * 1000, /* nodes of a kernel after inlining and unrolling */
    MAX_OVERLOADS = 64              /* functions sharing one name */
};

static pk_type T(int kind) { return pk_type_make(kind); }
static bool is_err(pk_type t) { return t.kind == PK_T_ERROR; }

static pk_name *name_of(checker *k, const char *s) { return pk_intern(k->c, s, strlen(s)); }

/* Where a clashing name was declared first, for the error message. */
static bool prior_decl(checker *k, pk_name *n, pk_loc *loc, const char **what) {
    pk_var *gc = ck_global_const(k, n);
    pk_func *fs = ck_global_funcs(k, n);
    if (n->local) {
        *loc = n->local->loc;
        *what = n->local->kind == PK_VAR_PARAM ? "a parameter" : "a variable";
    } else if (gc) {
        *loc = gc->loc;
        *what = "a constant";
    } else if (fs) {
        *loc = fs->loc;
        *what = fs->is_kernel ? "a kernel" : "a function";
    } else {
        return false;
    }
    return true;
}

static bool loc_is_stdlib(checker *k, pk_loc loc) { return loc.file == k->c->stdlib_file; }

/* The standard library is checked as if the user's declarations did not exist: user names may
 * not clash with it, but a user constant must not break a stdlib function's local either. */
pk_var *ck_global_const(checker *k, pk_name *n) {
    pk_var *v = n->global_const;
    if (v && k->in_stdlib && !loc_is_stdlib(k, v->loc))
        return NULL;
    return v;
}

pk_func *ck_global_funcs(checker *k, pk_name *n) {
    pk_func *f = n->funcs;
    if (f && k->in_stdlib && !f->from_stdlib)
        return NULL;
    return f;
}

/* Reports a declaration of `name` at `loc` that clashes with something visible. */
static bool clashes(checker *k, const char *name, pk_loc loc) {
    pk_name *n = name_of(k, name);
    if (n->builtin) {
        pk_error(k->c, loc, "'%s' is a builtin function and cannot be redeclared", name);
        return true;
    }
    pk_loc prev;
    const char *what;
    if (!prior_decl(k, n, &prev, &what))
        return false;
    if (loc_is_stdlib(k, prev) && !loc_is_stdlib(k, loc))
        pk_error(k->c, loc, "'%s' is already defined by the standard library at %s:%u:%u", name,
                 prev.file, prev.line, prev.col);
    else
        pk_error(k->c, loc, "'%s' is already declared as %s at line %u", name, what, prev.line);
    pk_note(k->c, prev, "'%s' is declared here", name);
    return true;
}

/* ------------------------------------------------------------ scopes */

static void bind_local(checker *k, pk_var *v) {
    pk_name *n = name_of(k, v->name);
    /* A local named like a kernel, function or constant is an error, but the uses after it
     * mean the local: bound all the same, they give no second error. (One named like another
     * local is not bound: unbinding it would hide the outer one.) */
    if (clashes(k, v->name, v->loc) && (n->local || n->builtin))
        return;
    n->local = v;
    if (k->nbound == k->capbound) {
        uint32_t ncap = k->capbound ? k->capbound * 2 : 64;
        pk_name **p = pk_alloc(k->c, ncap * sizeof *p);
        if (k->nbound)
            memcpy(p, k->bound, k->nbound * sizeof *p);
        k->bound = p;
        k->capbound = ncap;
    }
    k->bound[k->nbound++] = n;
}

static void unbind_to(checker *k, uint32_t mark) {
    while (k->nbound > mark)
        k->bound[--k->nbound]->local = NULL;
}

static void new_slot(checker *k, pk_var *v) {
    v->owner = k->fn;
    v->slot = k->fn->nvars++;
    v->region = k->region;
}

/* ------------------------------------------------------------ statements */

static void ck_stmt(checker *k, pk_stmt *s, bool top);

static void push_loop(checker *k, pk_stmt *s) {
    pk_vec_push(k->c, (void ***)&k->loops, &k->nloops, &k->caploops, s);
}

static void ck_scoped(checker *k, pk_stmt *s) {
    uint32_t mark = k->nbound;
    ck_stmt(k, s, false);
    unbind_to(k, mark);
}

static pk_expr *ck_cond(checker *k, pk_expr *e, const char *what) {
    e = ck_expr(k, e, 0);
    if (is_err(e->type))
        return e;
    if (e->untyped || e->type.kind != PK_T_BOOL) {
        ck_finalize(k, e);
        pk_error(k->c, e->loc, "%s must be bool, found %s", what, ck_tn(k, e->type));
        e->type = T(PK_T_ERROR);
    }
    return e;
}

static void ck_decl(checker *k, pk_stmt *s) {
    pk_var *v = s->var;
    if (v->type.kind == PK_T_FIELD) {
        pk_error(k->c, s->loc, "fields cannot be local variables; pass them as parameters");
        v->type = T(PK_T_ERROR);
    }
    char what[96];
    snprintf(what, sizeof what, "the initializer of '%s'", v->name);
    s->value = ck_expr_to(k, s->value, v->type, what);
    new_slot(k, v);
    bind_local(k, v);
    if (v->is_const && !is_err(s->value->type)) {
        pk_value val;
        if (pk_const_eval(k->c, s->value, &val, NULL)) {
            pk_value *pv = pk_alloc(k->c, sizeof *pv);
            *pv = val;
            v->value = pv;
        }
    }
    if (!v->is_const || !v->value)
        pk_vec_push(k->c, (void ***)&k->locals, &k->nlocals, &k->caplocals, v);
}

/* The variable or field access an assignment finally writes, or NULL after an error. */
static pk_expr *lvalue_root(checker *k, pk_expr *lhs, bool *partial) {
    *partial = false;
    pk_expr *e = lhs;
    for (;;) {
        if (e->kind == PK_E_SWIZZLE) {
            for (int i = 0; i < e->nswz; i++)
                for (int j = 0; j < i; j++)
                    if (e->swz[i] == e->swz[j]) {
                        pk_error(k->c, e->loc, "cannot assign to swizzle '%s' with a repeated component",
                                 e->name);
                        return NULL;
                    }
            *partial = true;
            e = e->lhs;
        } else if (e->kind == PK_E_COMPONENT) {
            *partial = true;
            e = e->lhs;
        } else {
            break;
        }
    }
    if (e->kind == PK_E_FIELD_ACCESS)
        return e;
    if (e->kind != PK_E_VAR) {
        pk_error(k->c, lhs->loc, "this expression cannot be assigned to");
        return NULL;
    }
    pk_var *v = e->var;
    if (v->kind == PK_VAR_GLOBAL_CONST || (v->kind == PK_VAR_LOCAL && v->is_const)) {
        pk_error(k->c, e->loc, "cannot assign to constant '%s'", v->name);
        return NULL;
    }
    if (v->kind == PK_VAR_LOOP) {
        pk_error(k->c, e->loc, "cannot assign to loop variable '%s'", v->name);
        return NULL;
    }
    if (v->kind == PK_VAR_PARAM && v->is_const) {
        pk_error(k->c, e->loc, "cannot assign to kernel parameter '%s'; copy it into a variable",
                 v->name);
        return NULL;
    }
    if (k->region && v->region != k->region) {
        pk_error(k->c, e->loc,
                 "cannot assign to '%s' inside a parallel loop: it is declared outside the loop "
                 "(use a 0-D field for reductions)", v->name);
        return NULL;
    }
    return e;
}

static void ck_assign(checker *k, pk_stmt *s) {
    s->lhs = ck_expr(k, s->lhs, CK_LVALUE);
    pk_type lt = s->lhs->type;
    if (is_err(lt)) {
        ck_expr(k, s->value, 0);
        return;
    }
    bool partial;
    pk_expr *root = lvalue_root(k, s->lhs, &partial);
    if (!root) {
        ck_expr(k, s->value, 0);
        return;
    }
    int op = s->op;
    char what[64];
    if (op == PK_OP_NONE) {
        s->value = ck_expr_to(k, s->value, lt, "the assignment");
    } else {
        snprintf(what, sizeof what, "operands to '%s='", pk_op_symbol(op));
        pk_expr *v = ck_expr(k, s->value, 0);
        s->value = v;
        if (is_err(v->type))
            return;
        int el = pk_type_scalar(lt).kind;
        bool ok = el != PK_T_BOOL && pk_is_numeric_kind(el);
        if (lt.kind == PK_T_MAT3 && (op == PK_OP_MIN || op == PK_OP_MAX))
            ok = false;
        if (lt.kind == PK_T_MAT3 && (op == PK_OP_MUL || op == PK_OP_DIV) &&
            v->type.kind == PK_T_MAT3) {
            pk_error(k->c, s->loc, "'%s=' on mat3 values is not supported; write 'm = m %s n'",
                     pk_op_symbol(op), pk_op_symbol(op));
            return;
        }
        if (!ok) {
            pk_error(k->c, s->loc, "'%s=' cannot be applied to %s", pk_op_symbol(op),
                     ck_tn(k, lt));
            return;
        }
        bool lt_vec = pk_is_vector_kind(lt.kind) || lt.kind == PK_T_MAT3;
        bool v_vec = pk_is_vector_kind(v->type.kind) || v->type.kind == PK_T_MAT3;
        if (v_vec && !pk_type_eq(v->type, lt)) {
            pk_error(k->c, s->loc, "invalid %s: %s and %s", what, ck_tn(k, lt), ck_tn(k, v->type));
            return;
        }
        if (lt_vec && !v_vec)
            ck_apply(k, &s->value, 1, lt, what);
        else
            s->value = ck_coerce(k, v, lt, what);
    }
    if (root->kind == PK_E_FIELD_ACCESS) {
        uint32_t bits = PK_ACCESS_WRITE | PK_ACCESS_ACTIVATE;
        if (op != PK_OP_NONE || partial)
            bits |= PK_ACCESS_READ;
        if (op != PK_OP_NONE && (k->region || !k->fn->is_kernel)) {
            s->atomic = 1;
            bits |= PK_ACCESS_ATOMIC;
        }
        ck_mark_field(k, root->var, bits);
    }
}

static void ck_for(checker *k, pk_stmt *s, bool top) {
    uint32_t mark = k->nbound;
    uint32_t saved_region = k->region;
    pk_var *v = s->var;
    bool kernel_top = top && k->fn->is_kernel;
    if (s->kind == PK_S_FOR_FIELD) {
        pk_expr *t = ck_expr(k, s->target, CK_FIELD_OK);
        s->target = t;
        if (!kernel_top) {
            pk_error(k->c, s->loc, "a struct-for 'for (%s in f)' must be an outermost loop of a kernel",
                     v->name);
            v->type = T(PK_T_ERROR);
        } else if (!is_err(t->type) && t->kind != PK_E_FIELD_REF) {
            pk_error(k->c, t->loc, "a struct-for iterates over a field; found %s (for a range write 'a .. b')",
                     ck_tn(k, ck_finalize(k, t)->type));
            v->type = T(PK_T_ERROR);
        } else if (!is_err(t->type) && t->var->type.dim == 0) {
            pk_error(k->c, t->loc, "cannot iterate over '%s': it is a 0-D field", t->var->name);
            v->type = T(PK_T_ERROR);
        } else if (!is_err(t->type)) {
            s->field = t->var;
            ck_mark_field(k, t->var, PK_ACCESS_ITERATE);
            v->type = pk_field_index_type(t->var->type.dim);
        } else {
            v->type = T(PK_T_ERROR);
        }
        s->target = NULL;
        s->parallel = 1;
    } else {
        pk_expr *ops[2] = {ck_expr(k, s->lo, 0), ck_expr(k, s->hi, 0)};
        pk_type t = T(PK_T_ERROR);
        if (!is_err(ops[0]->type) && !is_err(ops[1]->type)) {
            t = ck_unify(k, ops, 2, s->loc, "range bounds");
            bool ok = pk_is_int_kind(t.kind) || t.kind == PK_T_IVEC2 || t.kind == PK_T_IVEC3;
            if (s->kind == PK_S_FOR_STATIC)
                ok = t.kind == PK_T_I32;
            if (!is_err(t) && !ok) {
                pk_error(k->c, s->loc, "%s must be %s, found %s",
                         s->kind == PK_S_FOR_STATIC ? "bounds of a static loop" : "range bounds",
                         s->kind == PK_S_FOR_STATIC ? "i32 constants"
                                                    : "integers or ivec2/ivec3",
                         ck_tn(k, t));
                t = T(PK_T_ERROR);
            }
            if (!is_err(t) && (pk_is_vector_kind(ops[0]->type.kind) != pk_is_vector_kind(ops[1]->type.kind))) {
                pk_error(k->c, s->loc, "range bounds must have the same type, found %s and %s",
                         ck_tn(k, ck_finalize(k, ops[0])->type), ck_tn(k, ck_finalize(k, ops[1])->type));
                t = T(PK_T_ERROR);
            }
            ck_apply(k, ops, 2, t, "range bounds");
        }
        s->lo = ops[0];
        s->hi = ops[1];
        v->type = t;
        if (s->kind == PK_S_FOR_STATIC && !is_err(t)) {
            pk_value a, b;
            if (!pk_const_eval(k->c, s->lo, &a, NULL) || !pk_const_eval(k->c, s->hi, &b, NULL)) {
                pk_error(k->c, s->loc, "bounds of a static loop must be constants");
                v->type = T(PK_T_ERROR);
            } else {
                s->first = (int32_t)a.i[0];
                s->last = (int32_t)b.i[0];
            }
        }
        s->parallel = s->kind == PK_S_FOR_RANGE && kernel_top;
    }
    uint64_t saved_unroll = k->unroll;
    if (s->kind == PK_S_FOR_STATIC && s->last > s->first) {
        uint64_t trips = (uint64_t)((int64_t)s->last - s->first);
        if (k->unroll * trips > PK_MAX_UNROLL) {
            pk_error(k->c, s->loc, "static loops here unroll to more than %d copies",
                     PK_MAX_UNROLL);
            v->type = T(PK_T_ERROR);
        } else {
            k->unroll *= trips;
        }
    }
    if (s->parallel) {
        s->region = ++k->fn->nregions;
        k->region = s->region;
    }
    new_slot(k, v);
    bind_local(k, v);
    push_loop(k, s);
    ck_scoped(k, s->then);
    k->nloops--;
    k->unroll = saved_unroll;
    k->region = saved_region;
    unbind_to(k, mark);
}

static void ck_stmt(checker *k, pk_stmt *s, bool top) {
    if (k->c->fatal)
        return;
    k->weight += k->unroll;
    switch (s->kind) {
    case PK_S_BLOCK: {
        uint32_t mark = k->nbound;
        for (uint32_t i = 0; i < s->nbody; i++)
            ck_stmt(k, s->body[i], false);
        unbind_to(k, mark);
        break;
    }
    case PK_S_DECL:
        ck_decl(k, s);
        break;
    case PK_S_ASSIGN:
        ck_assign(k, s);
        break;
    case PK_S_EXPR: {
        pk_expr *e = ck_expr(k, s->value, CK_VOID_OK);
        s->value = e;
        if (!is_err(e->type) && e->kind != PK_E_CALL && e->kind != PK_E_BUILTIN) {
            pk_error(k->c, e->loc, "this expression has no effect");
        } else if (e->kind == PK_E_BUILTIN && e->builtin != PK_B_ACTIVATE &&
                   e->builtin != PK_B_DEACTIVATE) {
            pk_error(k->c, e->loc, "the result of '%s' is not used", pk_builtin_name(e->builtin));
        }
        break;
    }
    case PK_S_IF:
        s->cond = ck_cond(k, s->cond, "the condition of 'if'");
        ck_scoped(k, s->then);
        if (s->els)
            ck_scoped(k, s->els);
        break;
    case PK_S_WHILE:
        s->cond = ck_cond(k, s->cond, "the condition of 'while'");
        push_loop(k, s);
        ck_scoped(k, s->then);
        k->nloops--;
        break;
    case PK_S_FOR_RANGE:
    case PK_S_FOR_FIELD:
    case PK_S_FOR_STATIC:
        ck_for(k, s, top);
        break;
    case PK_S_BREAK:
    case PK_S_CONTINUE: {
        const char *kw = s->kind == PK_S_BREAK ? "break" : "continue";
        pk_stmt *loop = k->nloops ? k->loops[k->nloops - 1] : NULL;
        if (!loop)
            pk_error(k->c, s->loc, "'%s' outside of a loop", kw);
        else if (loop->kind == PK_S_FOR_STATIC)
            pk_error(k->c, s->loc, "'%s' cannot be used in a static (unrolled) loop", kw);
        else if (loop->parallel && s->kind == PK_S_BREAK)
            pk_error(k->c, s->loc,
                     "'break' cannot leave a parallel loop; use 'continue' to skip an iteration");
        s->loop = loop;
        break;
    }
    case PK_S_RETURN: {
        pk_func *f = k->fn;
        if (f->is_kernel) {
            pk_error(k->c, s->loc, "'return' is not allowed in a kernel");
            if (s->value)
                ck_expr(k, s->value, 0);
            break;
        }
        if (f->ret.kind == PK_T_VOID) {
            if (s->value) {
                pk_error(k->c, s->value->loc, "function '%s' does not return a value", f->name);
                ck_expr(k, s->value, CK_VOID_OK);
            }
        } else if (!s->value) {
            pk_error(k->c, s->loc, "function '%s' must return a value of type %s", f->name,
                     ck_tn(k, f->ret));
        } else {
            s->value = ck_expr_to(k, s->value, f->ret, "the return value");
        }
        break;
    }
    default:
        break;
    }
}

/* Does every path through s end in a return? */
static bool always_returns(const pk_stmt *s) {
    if (!s)
        return false;
    switch (s->kind) {
    case PK_S_RETURN:
        return true;
    case PK_S_BLOCK:
        for (uint32_t i = 0; i < s->nbody; i++)
            if (always_returns(s->body[i]))
                return true;
        return false;
    case PK_S_IF:
        return s->els && always_returns(s->then) && always_returns(s->els);
    default:
        return false;
    }
}

/* ------------------------------------------------------------ declarations */

static void ck_signature(checker *k, pk_func *f) {
    if (f->ret.kind == PK_T_FIELD) {
        pk_error(k->c, f->loc, "functions cannot return fields");
        f->ret = T(PK_T_ERROR);
    }
    for (uint32_t i = 0; i < f->nparams; i++) {
        pk_var *p = f->params[i];
        if (f->is_kernel && p->type.kind != PK_T_FIELD)
            p->is_const = 1;
    }
}

static void ck_function(checker *k, pk_func *f) {
    k->fn = f;
    k->in_stdlib = f->from_stdlib;
    k->region = 0;
    k->unroll = 1;
    k->weight = 0;
    k->nloops = 0;
    k->nlocals = 0;
    uint32_t mark = k->nbound;
    for (uint32_t i = 0; i < f->nparams; i++) {
        new_slot(k, f->params[i]);
        bind_local(k, f->params[i]);
    }
    for (uint32_t i = 0; i < f->body->nbody && !k->c->fatal; i++)
        ck_stmt(k, f->body->body[i], true);
    unbind_to(k, mark);
    if (!is_err(f->ret) && f->ret.kind != PK_T_VOID && !always_returns(f->body))
        pk_error(k->c, f->loc,
                 "function '%s' returns a value, so every path through its body must reach a "
                 "'return' (one inside a loop does not count: add a return after the loop)",
                 f->name);
    /* after an error, unused variables are mostly its consequences: stay quiet */
    if (!f->from_stdlib && k->c->nerrors == 0)
        for (uint32_t i = 0; i < k->nlocals; i++)
            if (k->locals[i]->uses == 0 && k->locals[i]->name[0] != '_')
                pk_warning(k->c, k->locals[i]->loc, "unused variable '%s'", k->locals[i]->name);
    k->weights[f->index] = k->weight;
    k->fn = NULL;
    k->in_stdlib = false;
}

static void ck_const(checker *k, pk_var *v) {
    k->in_stdlib = loc_is_stdlib(k, v->loc);
    v->state = 1;
    if (v->type.kind == PK_T_FIELD) {
        pk_error(k->c, v->loc, "a constant cannot be a field");
        v->state = 3;
        return;
    }
    char what[96];
    snprintf(what, sizeof what, "the initializer of '%s'", v->name);
    k->unroll = 1;
    v->init = ck_expr_to(k, v->init, v->type, what);
    if (is_err(v->init->type)) {
        v->state = 3;
        return;
    }
    pk_value val;
    const char *why = NULL;
    if (!pk_const_eval(k->c, v->init, &val, &why)) {
        if (why)
            pk_error(k->c, v->init->loc, "the initializer of constant '%s' %s", v->name, why);
        else
            pk_error(k->c, v->init->loc, "the initializer of constant '%s' is not a constant expression",
                     v->name);
        v->state = 3;
        return;
    }
    pk_value *pv = pk_alloc(k->c, sizeof *pv);
    *pv = val;
    v->value = pv;
    v->state = 2;
}

/* Binds the top-level names of the standard library (stdlib=true) or of the user's source,
 * so that a clash is always reported at the user's declaration. */
static void declare_globals(checker *k, bool stdlib) {
    pk_program *prog = k->c->prog;
    for (uint32_t i = 0; i < prog->nconsts; i++) {
        pk_var *v = prog->consts[i];
        if (loc_is_stdlib(k, v->loc) != stdlib)
            continue;
        if (clashes(k, v->name, v->loc))
            continue;
        name_of(k, v->name)->global_const = v;
    }
    for (uint32_t i = 0; i < prog->nfuncs; i++) {
        pk_func *f = prog->funcs[i];
        if ((bool)f->from_stdlib != stdlib)
            continue;
        pk_name *n = name_of(k, f->name);
        bool clash = false;
        if (n->funcs && !f->is_kernel && !n->funcs->is_kernel &&
            n->funcs->from_stdlib == f->from_stdlib) {
            /* an overload: parameter types must differ */
            uint32_t count = 0;
            for (pk_func *g = n->funcs; g; g = g->next_overload)
                count++;
            if (count >= MAX_OVERLOADS) {
                pk_error(k->c, f->loc, "too many overloads of '%s' (at most %d)", f->name,
                         MAX_OVERLOADS);
                continue;
            }
            for (pk_func *g = n->funcs; g; g = g->next_overload) {
                bool same = g->nparams == f->nparams;
                for (uint32_t j = 0; same && j < f->nparams; j++)
                    same = pk_type_eq(g->params[j]->type, f->params[j]->type);
                if (same) {
                    pk_error(k->c, f->loc, "function '%s' is already defined with the same parameter types at line %u",
                             f->name, g->loc.line);
                    pk_note(k->c, g->loc, "'%s' is declared here", f->name);
                    clash = true;
                    break;
                }
            }
        } else {
            clash = clashes(k, f->name, f->loc);
        }
        if (clash)
            continue;
        pk_func **tail = &n->funcs;
        while (*tail)
            tail = &(*tail)->next_overload;
        *tail = f;
    }
}

/* ------------------------------------------------------------ whole program */

/* Reports cycles in the call graph (iterative DFS: the graph can be deep). */
/* 'f', or 'f(i32, f32)' when f is overloaded: a cycle through overloads reads as one. */
static void put_fn_name(checker *k, pk_buf *b, const pk_program *prog, const pk_func *f) {
    bool overloaded = f->next_overload != NULL;
    for (uint32_t i = 0; i < prog->nfuncs && !overloaded; i++)
        overloaded = prog->funcs[i] != f && !strcmp(prog->funcs[i]->name, f->name);
    pk_buf_printf(k->c, b, "'%s", f->name);
    if (overloaded) {
        pk_buf_printf(k->c, b, "(");
        for (uint32_t i = 0; i < f->nparams; i++)
            pk_buf_printf(k->c, b, "%s%s", i ? ", " : "", ck_tn(k, f->params[i]->type));
        pk_buf_printf(k->c, b, ")");
    }
    pk_buf_printf(k->c, b, "'");
}

static void find_recursion(checker *k) {
    pk_program *prog = k->c->prog;
    uint32_t n = prog->nfuncs;
    uint8_t *color = pk_alloc(k->c, n ? n : 1);
    uint32_t *stack = pk_alloc(k->c, sizeof(uint32_t) * (n ? n : 1));
    uint32_t *next = pk_alloc(k->c, sizeof(uint32_t) * (n ? n : 1));
    for (uint32_t root = 0; root < n; root++) {
        if (color[root])
            continue;
        uint32_t sp = 0;
        stack[sp++] = root;
        next[root] = 0;
        color[root] = 1;
        while (sp) {
            pk_func *f = prog->funcs[stack[sp - 1]];
            if (next[f->index] == f->ncallees) {
                color[f->index] = 2;
                sp--;
                continue;
            }
            pk_func *g = f->callees[next[f->index]++];
            if (color[g->index] == 0) {
                color[g->index] = 1;
                next[g->index] = 0;
                stack[sp++] = g->index;
            } else if (color[g->index] == 1) {
                /* the cycle is g -> ... -> f -> g: find the call in f */
                pk_loc at = f->loc;
                for (uint32_t i = 0; i < k->ncalls; i++)
                    if (k->calls[i].caller == f && k->calls[i].callee == g) {
                        at = k->calls[i].call->loc;
                        break;
                    }
                pk_buf path = {0};
                uint32_t from = 0;
                while (from < sp && stack[from] != g->index)
                    from++;
                for (uint32_t i = from; i < sp; i++) {
                    put_fn_name(k, &path, prog, prog->funcs[stack[i]]);
                    pk_buf_printf(k->c, &path, " -> ");
                }
                put_fn_name(k, &path, prog, g);
                if (f == g)
                    pk_error(k->c, at, "function '%s' calls itself; recursion is not allowed (functions are inlined)",
                             g->name);
                else
                    pk_error(k->c, at, "recursive call %s; recursion is not allowed (functions are inlined)",
                             path.data);
            }
        }
    }
}

/* Size of each kernel once functions are inlined and static loops unrolled: bounded so that
 * later stages cannot be made to explode. Callees come first in post-order; the call graph is
 * acyclic here. */
static void check_expanded_size(checker *k) {
    pk_program *prog = k->c->prog;
    uint32_t n = prog->nfuncs;
    uint64_t *size = pk_alloc(k->c, sizeof(uint64_t) * (n ? n : 1));
    uint8_t *done = pk_alloc(k->c, n ? n : 1);
    uint32_t *stack = pk_alloc(k->c, sizeof(uint32_t) * (n ? n : 1));
    uint32_t *next = pk_alloc(k->c, sizeof(uint32_t) * (n ? n : 1));
    /* per-function call lists from the call sites */
    uint32_t *first = pk_alloc(k->c, sizeof(uint32_t) * (n + 1));
    uint32_t *order = pk_alloc(k->c, sizeof(uint32_t) * (k->ncalls ? k->ncalls : 1));
    for (uint32_t i = 0; i < k->ncalls; i++)
        first[k->calls[i].caller->index + 1]++;
    for (uint32_t i = 0; i < n; i++)
        first[i + 1] += first[i];
    uint32_t *fill = pk_alloc(k->c, sizeof(uint32_t) * (n ? n : 1));
    for (uint32_t i = 0; i < k->ncalls; i++) {
        uint32_t f = k->calls[i].caller->index;
        order[first[f] + fill[f]++] = i;
    }
    const uint64_t cap = (uint64_t)MAX_EXPANDED * 16;
    for (uint32_t root = 0; root < n; root++) {
        if (done[root])
            continue;
        uint32_t sp = 0;
        stack[sp++] = root;
        next[root] = 0;
        done[root] = 1; /* on stack */
        while (sp) {
            uint32_t f = stack[sp - 1];
            uint32_t ci = first[f] + next[f];
            if (ci == first[f + 1]) {
                uint64_t s = k->weights[f];
                for (uint32_t j = first[f]; j < first[f + 1]; j++) {
                    const pk_callsite *cs = &k->calls[order[j]];
                    uint64_t add = size[cs->callee->index];
                    add = add > cap / (cs->mult ? cs->mult : 1) ? cap : add * cs->mult;
                    s = s + add > cap ? cap : s + add;
                }
                size[f] = s;
                done[f] = 2;
                sp--;
                continue;
            }
            next[f]++;
            uint32_t g = k->calls[order[ci]].callee->index;
            if (!done[g]) {
                done[g] = 1;
                next[g] = 0;
                stack[sp++] = g;
            }
        }
    }
    for (uint32_t i = 0; i < prog->nkernels; i++) {
        pk_func *f = prog->kernels[i];
        if (size[f->index] > MAX_EXPANDED)
            pk_error(k->c, f->loc,
                     "kernel '%s' is too large once functions are inlined and static loops unrolled "
                     "(more than %d nodes)", f->name, MAX_EXPANDED);
    }
}

/* A field passed to a function gets the accesses the function makes to its parameter. */
static void propagate_access(checker *k) {
    bool changed = true;
    for (int round = 0; changed && round < 64; round++) {
        changed = false;
        for (uint32_t i = 0; i < k->ncalls; i++) {
            const pk_callsite *cs = &k->calls[i];
            for (uint32_t a = 0; a < cs->call->nargs && a < cs->callee->nparams; a++) {
                pk_expr *arg = cs->call->args[a];
                if (arg->kind != PK_E_FIELD_REF)
                    continue;
                uint32_t bits = cs->callee->params[a]->field_access;
                if (cs->caller->is_kernel && !cs->parallel)
                    bits &= ~(uint32_t)PK_ACCESS_ATOMIC;
                if ((arg->var->field_access | bits) != arg->var->field_access) {
                    arg->var->field_access |= bits;
                    changed = true;
                }
            }
        }
    }
}

void pk_check_program(pk_ctx *c) {
    checker K = {0};
    checker *k = &K;
    k->c = c;
    k->unroll = 1;
    pk_program *prog = c->prog;
    k->weights = pk_alloc(c, sizeof(uint64_t) * (prog->nfuncs ? prog->nfuncs : 1));
    k->callee_stamp = pk_alloc(c, sizeof(uint32_t) * (prog->nfuncs ? prog->nfuncs : 1));
    for (uint32_t i = 0; i < prog->nfuncs; i++)
        prog->funcs[i]->index = i;
    declare_globals(k, true);
    declare_globals(k, false);
    for (uint32_t i = 0; i < prog->nfuncs; i++)
        ck_signature(k, prog->funcs[i]);
    for (uint32_t i = 0; i < prog->nconsts && !c->fatal; i++)
        if (name_of(k, prog->consts[i]->name)->global_const == prog->consts[i])
            ck_const(k, prog->consts[i]);
        else
            prog->consts[i]->state = 3;
    k->in_stdlib = false;
    for (uint32_t i = 0; i < prog->nfuncs && !c->fatal; i++)
        ck_function(k, prog->funcs[i]);
    if (c->fatal)
        return;
    find_recursion(k);
    if (c->nerrors)
        return;
    check_expanded_size(k);
    propagate_access(k);
}
