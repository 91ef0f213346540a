/* check_expr.c — names, operators, indexing and members: resolves parser-only nodes and gives
 * every expression its type. Literals stay "untyped" until their context gives them a type
 * (an operand, a parameter, a declared variable); operations on literals alone are folded. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/lang/check.h"

const char *ck_tn(checker *k, pk_type t) {
    char buf[48];
    pk_type_name(t, buf, sizeof buf);
    return pk_strndup(k->c, buf, strlen(buf));
}

pk_expr *ck_new(checker *k, int kind, pk_type t, pk_loc loc) {
    pk_expr *e = pk_alloc(k->c, sizeof *e);
    e->kind = (uint8_t)kind;
    e->type = t;
    e->loc = loc;
    e->depth = 1;
    return e;
}

static pk_type T(int kind) { return pk_type_make(kind); }
static bool is_err(pk_type t) { return t.kind == PK_T_ERROR; }
static bool is_vecmat(pk_type t) { return pk_is_vector_kind(t.kind) || t.kind == PK_T_MAT3; }

void ck_mark_field(checker *k, pk_var *v, uint32_t bits) {
    (void)k;
    if (v && v->type.kind == PK_T_FIELD)
        v->field_access |= bits;
}

/* ------------------------------------------------------------ conversions */

bool ck_implicit_ok(pk_type from, pk_type to) {
    if (pk_type_eq(from, to))
        return true;
    switch (from.kind) {
    case PK_T_I32:
    case PK_T_U32:
        return to.kind == PK_T_I64 || to.kind == PK_T_F32 || to.kind == PK_T_F64;
    case PK_T_I64:
        return to.kind == PK_T_F32 || to.kind == PK_T_F64;
    case PK_T_F32:
        return to.kind == PK_T_F64;
    default:
        return false;
    }
}

static bool fits(int64_t v, int kind) {
    switch (kind) {
    case PK_T_I32: return v >= INT32_MIN && v <= INT32_MAX;
    case PK_T_U32: return v >= 0 && v <= (int64_t)UINT32_MAX;
    default: return true;
    }
}

/* A float literal of type f32 past f32's range would become infinite: an error, as an integer
 * literal that does not fit is. */
static bool float_lit_fits(checker *k, const pk_expr *e, int kind) {
    /* a NaN fits, but a constant one is a mistake more often than not (0.0 / 0.0), where an
     * infinite one is an error */
    if (e->folded && isnan(e->fval))
        pk_warning(k->c, ck_expr_start(e), "the constant expression's value is NaN (0/0, inf - inf or the like)");
    /* below 0x1.ffffffp127 a double rounds to a finite f32 (3.4028235e38 is FLT_MAX written out) */
    if (kind != PK_T_F32 || !(fabs(e->fval) >= 0x1.ffffffp127))
        return true;
    pk_error(k->c, e->loc, "%s %g does not fit in f32 (at most about 3.4e38)",
             e->folded ? "the constant expression's value" : "float literal", e->fval);
    return false;
}

/* Gives an untyped literal type t; NULL when t cannot hold a literal of that kind. */
static pk_expr *retype_literal(checker *k, pk_expr *e, pk_type t) {
    if (e->kind == PK_E_INT) {
        if (pk_is_int_kind(t.kind)) {
            if (!fits(e->ival, t.kind))
                pk_error(k->c, e->loc, "%s %lld does not fit in %s",
                         e->folded ? "the constant expression's value" : "integer literal",
                         (long long)e->ival, pk_type_kind_name(t.kind));
            e->type = t;
            e->untyped = 0;
            return e;
        }
        if (pk_is_float_kind(t.kind)) {
            e->kind = PK_E_FLOAT;
            e->fval = (double)e->ival;
            e->type = t;
            e->untyped = 0;
            return e;
        }
        return NULL;
    }
    if (e->kind == PK_E_FLOAT && pk_is_float_kind(t.kind)) {
        float_lit_fits(k, e, t.kind);
        e->type = t;
        e->untyped = 0;
        return e;
    }
    return NULL;
}

pk_expr *ck_finalize(checker *k, pk_expr *e) {
    if (!e->untyped)
        return e;
    if (e->kind == PK_E_INT) {
        e->type = T(fits(e->ival, PK_T_I32) ? PK_T_I32 : PK_T_I64);
    } else {
        e->type = T(PK_T_F32);
        if (e->kind == PK_E_FLOAT)
            float_lit_fits(k, e, PK_T_F32);
    }
    e->untyped = 0;
    return e;
}

static bool explicit_ok(pk_type from, pk_type to) {
    if (pk_is_numeric_kind(from.kind) && pk_is_numeric_kind(to.kind))
        return true;
    if (pk_is_vector_kind(from.kind) && pk_is_vector_kind(to.kind))
        return pk_type_components(from) == pk_type_components(to);
    return pk_type_eq(from, to);
}

static pk_expr *cast_node(checker *k, pk_expr *e, pk_type t, bool implicit) {
    pk_expr *c = ck_new(k, PK_E_CAST, t, e->loc);
    c->start = e->start;
    c->lhs = e;
    c->implicit = implicit;
    c->depth = (uint16_t)(e->depth + 1);
    return c;
}

/* Where an expression starts: a conversion error is about all of `v[I] + w[I]`, so its caret
 * goes under the `v`, not under the `+` or the `[` (the nodes' own places). */
pk_loc ck_expr_start(const pk_expr *e) { return e->start.line ? e->start : e->loc; }

/* A scalar stored into a vector place (an assignment, an initializer, a return): the
 * error says to construct the vector, as a compound assignment would have broadcast it. Not for
 * an index, where ivec3(i) is rarely what was meant. */
static bool fills_place(pk_type t, const char *what) {
    /* not mat3: mat3(s) is a diagonal matrix, not a fill */
    return pk_is_vector_kind(t.kind) &&
           (!strcmp(what, "the assignment") || !strncmp(what, "the initializer of", 18) ||
            !strcmp(what, "the return value"));
}

pk_expr *ck_coerce(checker *k, pk_expr *e, pk_type t, const char *what) {
    if (is_err(e->type) || is_err(t))
        return e;
    if (e->untyped) {
        pk_expr *r = retype_literal(k, e, t);
        if (r)
            return r;
        bool splat = fills_place(t, what);
        pk_error(k->c, e->loc, "cannot convert %s literal to %s in %s%s%s%s", e->kind == PK_E_INT ? "an integer" : "a float",
                 ck_tn(k, t), what, splat ? ": write " : "",
                 splat ? ck_tn(k, t) : "", splat ? "(...) around it (a scalar fills a vector only in arithmetic and op=)" : "");
        e->type = T(PK_T_ERROR);
        return e;
    }
    if (pk_type_eq(e->type, t))
        return e;
    if (ck_implicit_ok(e->type, t))
        return cast_node(k, e, t, true);
    if (explicit_ok(e->type, t))
        pk_error(k->c, ck_expr_start(e), "cannot convert %s to %s implicitly in %s; write %s(...)",
                 ck_tn(k, e->type), ck_tn(k, t), what, ck_tn(k, t));
    else if (fills_place(t, what) && !pk_is_vector_kind(e->type.kind) && e->type.kind != PK_T_MAT3)
        pk_error(k->c, ck_expr_start(e),
                 "cannot convert %s to %s in %s: write %s(...) around it (a scalar fills a vector only "
                 "in arithmetic and op=)",
                 ck_tn(k, e->type), ck_tn(k, t), what, ck_tn(k, t));
    else
        pk_error(k->c, ck_expr_start(e), "cannot convert %s to %s in %s", ck_tn(k, e->type),
                 ck_tn(k, t), what);
    e->type = T(PK_T_ERROR);
    return e;
}

pk_expr *ck_convert(checker *k, pk_expr *e, pk_type t) {
    if (is_err(e->type) || is_err(t))
        return e;
    if (e->untyped) {
        pk_expr *r = retype_literal(k, e, t);
        if (r)
            return r;
        ck_finalize(k, e);
    }
    if (pk_type_eq(e->type, t))
        return e;
    if (explicit_ok(e->type, t))
        return cast_node(k, e, t, false);
    pk_error(k->c, ck_expr_start(e), "cannot convert %s to %s", ck_tn(k, e->type), ck_tn(k, t));
    e->type = T(PK_T_ERROR);
    return e;
}

pk_expr *ck_expr_to(checker *k, pk_expr *e, pk_type t, const char *what) {
    return ck_coerce(k, ck_expr(k, e, 0), t, what);
}

static pk_type join(pk_type a, pk_type b) {
    if (pk_type_eq(a, b))
        return a;
    if (ck_implicit_ok(a, b))
        return b;
    if (ck_implicit_ok(b, a))
        return a;
    return T(PK_T_ERROR);
}

pk_type ck_unify(checker *k, pk_expr **ops, int n, pk_loc loc, const char *what) {
    pk_type vec = T(0), sca = T(0);
    bool any_float_lit = false, big_int_lit = false, any_lit = false;
    const pk_expr *first_sca = NULL;
    for (int i = 0; i < n; i++) {
        pk_type t = ops[i]->type;
        if (is_err(t))
            return t;
        if (ops[i]->untyped) {
            any_lit = true;
            if (ops[i]->kind == PK_E_FLOAT)
                any_float_lit = true;
            else if (!fits(ops[i]->ival, PK_T_I32))
                big_int_lit = true;
            continue;
        }
        if (is_vecmat(t)) {
            if (vec.kind && !pk_type_eq(vec, t)) {
                pk_error(k->c, loc, "invalid %s: %s and %s", what, ck_tn(k, vec), ck_tn(k, t));
                return T(PK_T_ERROR);
            }
            vec = t;
        } else if (pk_is_scalar_kind(t.kind)) {
            if (!sca.kind) {
                sca = t;
                first_sca = ops[i];
            } else {
                pk_type j = join(sca, t);
                if (is_err(j)) {
                    /* i32 and u32 meet nowhere without losing values: say which cast to write */
                    bool iu = (sca.kind == PK_T_I32 && t.kind == PK_T_U32) ||
                              (sca.kind == PK_T_U32 && t.kind == PK_T_I32);
                    pk_error(k->c, loc, "invalid %s: %s and %s%s", what, ck_tn(k, sca), ck_tn(k, t),
                             iu ? " (i32 and u32 do not mix implicitly: convert one with i32(...), "
                                  "u32(...) or i64(...))"
                                : "");
                    return j;
                }
                sca = j;
            }
        } else {
            pk_error(k->c, ops[i]->loc, "invalid %s: %s", what, ck_tn(k, t));
            return T(PK_T_ERROR);
        }
    }
    (void)first_sca;
    if (vec.kind) {
        pk_type el = pk_type_scalar(vec);
        if (sca.kind && !ck_implicit_ok(sca, el)) {
            pk_error(k->c, loc, "invalid %s: %s and %s", what, ck_tn(k, vec), ck_tn(k, sca));
            return T(PK_T_ERROR);
        }
        if (any_float_lit && !pk_is_float_kind(el.kind)) {
            pk_error(k->c, loc, "invalid %s: %s and a float literal", what, ck_tn(k, vec));
            return T(PK_T_ERROR);
        }
        return vec;
    }
    if (sca.kind) {
        if (any_float_lit && !pk_is_float_kind(sca.kind)) {
            if (sca.kind == PK_T_BOOL) {
                pk_error(k->c, loc, "invalid %s: bool and a float literal", what);
                return T(PK_T_ERROR);
            }
            return T(PK_T_F32);
        }
        if (any_lit && sca.kind == PK_T_BOOL) {
            pk_error(k->c, loc, "invalid %s: bool and a number", what);
            return T(PK_T_ERROR);
        }
        return sca;
    }
    return T(any_float_lit ? PK_T_F32 : big_int_lit ? PK_T_I64 : PK_T_I32);
}

void ck_apply(checker *k, pk_expr **ops, int n, pk_type t, const char *what) {
    if (is_err(t))
        return;
    for (int i = 0; i < n; i++) {
        pk_expr *e = ops[i];
        if (is_vecmat(t) && !is_vecmat(e->type) && !is_err(e->type)) {
            e = ck_coerce(k, e, pk_type_scalar(t), what);
            pk_expr *s = ck_new(k, PK_E_SPLAT, t, e->loc);
            s->lhs = e;
            s->depth = (uint16_t)(e->depth + 1);
            ops[i] = s;
        } else {
            ops[i] = ck_coerce(k, e, t, what);
        }
    }
}

/* ------------------------------------------------------------ folding of literals */

static pk_expr *fold(checker *k, pk_expr *e) {
    pk_expr *a = e->lhs, *b = e->rhs;
    bool flt = a->kind == PK_E_FLOAT || b->kind == PK_E_FLOAT;
    double x = a->kind == PK_E_FLOAT ? a->fval : (double)a->ival;
    double y = b->kind == PK_E_FLOAT ? b->fval : (double)b->ival;
    int64_t i = a->ival, j = b->ival, r = 0;
    const char *sym = pk_op_symbol(e->op);
    e->lhs = e->rhs = NULL;
    e->depth = 1;
    e->folded = 1;
    switch (e->op) {
    case PK_OP_LT: case PK_OP_LE: case PK_OP_GT: case PK_OP_GE: case PK_OP_EQ: case PK_OP_NE: {
        int c;
        if (flt)
            c = e->op == PK_OP_LT ? x < y : e->op == PK_OP_LE ? x <= y : e->op == PK_OP_GT ? x > y
              : e->op == PK_OP_GE ? x >= y : e->op == PK_OP_EQ ? x == y : x != y;
        else
            c = e->op == PK_OP_LT ? i < j : e->op == PK_OP_LE ? i <= j : e->op == PK_OP_GT ? i > j
              : e->op == PK_OP_GE ? i >= j : e->op == PK_OP_EQ ? i == j : i != j;
        e->kind = PK_E_BOOL;
        e->ival = c;
        e->type = T(PK_T_BOOL);
        return e;
    }
    case PK_OP_AND: case PK_OP_OR:
        pk_error(k->c, e->loc, "'%s' needs bool operands, found numbers", sym);
        e->type = T(PK_T_ERROR);
        return e;
    default:
        break;
    }
    if (flt) {
        double v;
        switch (e->op) {
        case PK_OP_ADD: v = x + y; break;
        case PK_OP_SUB: v = x - y; break;
        case PK_OP_MUL: v = x * y; break;
        case PK_OP_DIV: v = x / y; break;
        default:
            pk_error(k->c, e->loc, "'%s' needs integer operands, found a float literal", sym);
            e->type = T(PK_T_ERROR);
            return e;
        }
        e->kind = PK_E_FLOAT;
        e->fval = v;
        e->untyped = 1;
        e->type = T(PK_T_F32);
        return e;
    }
    bool ovf = false;
    switch (e->op) {
    case PK_OP_ADD: ovf = __builtin_add_overflow(i, j, &r); break;
    case PK_OP_SUB: ovf = __builtin_sub_overflow(i, j, &r); break;
    case PK_OP_MUL: ovf = __builtin_mul_overflow(i, j, &r); break;
    case PK_OP_DIV:
    case PK_OP_MOD:
        if (j == 0) {
            pk_error(k->c, e->loc, "division by zero");
            e->type = T(PK_T_ERROR);
            return e;
        }
        if (i == INT64_MIN && j == -1) {
            ovf = true;
            break;
        }
        if (e->op == PK_OP_DIV) {
            r = i / j;
            if (i % j != 0 && ((i < 0) != (j < 0)))
                r--;
        } else {
            r = i % j;
            if (r != 0 && ((r < 0) != (j < 0)))
                r += j;
        }
        break;
    case PK_OP_BITAND: r = i & j; break;
    case PK_OP_BITOR: r = i | j; break;
    case PK_OP_BITXOR: r = i ^ j; break;
    case PK_OP_SHL:
    case PK_OP_SHR:
        if (j < 0 || j > 62) {
            pk_error(k->c, e->loc, "shift amount %lld is out of range", (long long)j);
            e->type = T(PK_T_ERROR);
            return e;
        }
        if (e->op == PK_OP_SHL) {
            r = (int64_t)((uint64_t)i << j);
            ovf = (r >> j) != i;
        } else {
            r = i >= 0 ? i >> j : ~(~i >> j);
        }
        break;
    default:
        e->type = T(PK_T_ERROR);
        return e;
    }
    if (ovf) {
        pk_error(k->c, e->loc, "integer constant overflows");
        e->type = T(PK_T_ERROR);
        return e;
    }
    e->kind = PK_E_INT;
    e->ival = r;
    e->untyped = 1;
    e->type = T(PK_T_I32);
    return e;
}

/* ------------------------------------------------------------ operators */

static pk_expr *set_binary(pk_expr *e, pk_type t) {
    e->type = t;
    e->depth = (uint16_t)((e->lhs->depth > e->rhs->depth ? e->lhs->depth : e->rhs->depth) + 1);
    return e;
}

static pk_expr *err(pk_expr *e) {
    e->type = T(PK_T_ERROR);
    return e;
}

static pk_expr *ck_binary(checker *k, pk_expr *e) {
    e->lhs = ck_expr(k, e->lhs, 0);
    e->rhs = ck_expr(k, e->rhs, 0);
    pk_type L = e->lhs->type, R = e->rhs->type;
    if (is_err(L) || is_err(R))
        return err(e);
    if (e->lhs->untyped && e->rhs->untyped)
        return fold(k, e);
    char what[48];
    snprintf(what, sizeof what, "operands to '%s'", pk_op_symbol(e->op));
    pk_expr *ops[2] = {e->lhs, e->rhs};
    int op = e->op;
    if (op == PK_OP_AND || op == PK_OP_OR) {
        ck_finalize(k, e->lhs);
        ck_finalize(k, e->rhs);
        if (e->lhs->type.kind != PK_T_BOOL || e->rhs->type.kind != PK_T_BOOL) {
            pk_error(k->c, e->loc, "'%s' needs bool operands, found %s and %s",
                     pk_op_symbol(op), ck_tn(k, e->lhs->type), ck_tn(k, e->rhs->type));
            return err(e);
        }
        return set_binary(e, T(PK_T_BOOL));
    }
    if (op >= PK_OP_LT && op <= PK_OP_NE) {
        if (is_vecmat(L) || is_vecmat(R)) {
            pk_error(k->c, e->loc, "cannot compare %s values with '%s'; compare components",
                     ck_tn(k, is_vecmat(L) ? L : R), pk_op_symbol(op));
            return err(e);
        }
        pk_type t = ck_unify(k, ops, 2, e->loc, what);
        if (is_err(t))
            return err(e);
        if (t.kind == PK_T_BOOL && op != PK_OP_EQ && op != PK_OP_NE) {
            pk_error(k->c, e->loc, "'%s' cannot compare bool values", pk_op_symbol(op));
            return err(e);
        }
        ck_apply(k, ops, 2, t, what);
        e->lhs = ops[0];
        e->rhs = ops[1];
        return set_binary(e, T(PK_T_BOOL));
    }
    if (L.kind == PK_T_MAT3 || R.kind == PK_T_MAT3) {
        if (op == PK_OP_MUL && L.kind == PK_T_MAT3 && (R.kind == PK_T_MAT3 || R.kind == PK_T_VEC3)) {
            e->op = PK_OP_MATMUL;
            return set_binary(e, R);
        }
        if (op == PK_OP_MUL && L.kind == PK_T_VEC3) {
            pk_error(k->c, e->loc, "'vec3 * mat3' is not supported; write 'transpose(m) * v'");
            return err(e);
        }
        bool scalar_other = !is_vecmat(L.kind == PK_T_MAT3 ? R : L);
        bool ok = (op == PK_OP_MUL && scalar_other) ||
                  (op == PK_OP_DIV && L.kind == PK_T_MAT3 && scalar_other) ||
                  ((op == PK_OP_ADD || op == PK_OP_SUB) && L.kind == R.kind);
        if (!ok) {
            pk_error(k->c, e->loc, "invalid %s: %s and %s", what, ck_tn(k, L), ck_tn(k, R));
            return err(e);
        }
    }
    pk_type t = ck_unify(k, ops, 2, e->loc, what);
    if (is_err(t))
        return err(e);
    int el = pk_type_scalar(t).kind;
    if (el == PK_T_BOOL) {
        pk_error(k->c, e->loc, "'%s' cannot be applied to bool", pk_op_symbol(op));
        return err(e);
    }
    bool int_only = op == PK_OP_MOD || op >= PK_OP_BITAND;
    if (int_only && !pk_is_int_kind(el)) {
        pk_error(k->c, e->loc, "'%s' needs integer operands, found %s", pk_op_symbol(op),
                 ck_tn(k, t));
        return err(e);
    }
    if (op >= PK_OP_BITAND && is_vecmat(t)) {
        pk_error(k->c, e->loc, "'%s' needs integer scalars, found %s", pk_op_symbol(op),
                 ck_tn(k, t));
        return err(e);
    }
    ck_apply(k, ops, 2, t, what);
    e->lhs = ops[0];
    e->rhs = ops[1];
    return set_binary(e, t);
}

static pk_expr *ck_unary(checker *k, pk_expr *e) {
    pk_expr *a = ck_expr(k, e->lhs, 0);
    if (is_err(a->type))
        return err(e);
    if (a->untyped) {
        if (e->op == PK_OP_NEG) {
            if (a->kind == PK_E_INT) {
                if (a->ival == INT64_MIN) {
                    pk_error(k->c, e->loc, "integer constant overflows");
                    return err(e);
                }
                a->ival = -a->ival;
            } else {
                a->fval = -a->fval;
            }
            a->loc = e->loc;
            return a;
        }
        if (e->op == PK_OP_BITNOT && a->kind == PK_E_INT) {
            a->ival = ~a->ival;
            a->loc = e->loc;
            return a;
        }
        ck_finalize(k, a);
    }
    e->lhs = a;
    e->depth = (uint16_t)(a->depth + 1);
    pk_type t = a->type;
    switch (e->op) {
    case PK_OP_NEG:
        if (t.kind == PK_T_BOOL || t.kind == PK_T_U32 || !(pk_is_numeric_kind(t.kind) || is_vecmat(t))) {
            pk_error(k->c, e->loc, "cannot negate a value of type %s", ck_tn(k, t));
            return err(e);
        }
        break;
    case PK_OP_NOT:
        if (t.kind != PK_T_BOOL) {
            pk_error(k->c, e->loc, "'!' needs a bool operand, found %s", ck_tn(k, t));
            return err(e);
        }
        break;
    default:
        if (!pk_is_int_kind(t.kind)) {
            pk_error(k->c, e->loc, "'~' needs an integer operand, found %s", ck_tn(k, t));
            return err(e);
        }
        break;
    }
    e->type = t;
    return e;
}

static pk_expr *ck_select(checker *k, pk_expr *e) {
    e->cond = ck_expr(k, e->cond, 0);
    if (!is_err(e->cond->type) && (e->cond->untyped || e->cond->type.kind != PK_T_BOOL)) {
        ck_finalize(k, e->cond);
        pk_error(k->c, e->cond->loc, "condition must be bool, found %s", ck_tn(k, e->cond->type));
        e->cond->type = T(PK_T_ERROR);
    }
    pk_expr *ops[2] = {ck_expr(k, e->lhs, 0), ck_expr(k, e->rhs, 0)};
    e->lhs = ops[0];
    e->rhs = ops[1];
    if (is_err(ops[0]->type) || is_err(ops[1]->type) || is_err(e->cond->type))
        return err(e);
    if (is_vecmat(ops[0]->type) != is_vecmat(ops[1]->type)) {
        pk_error(k->c, e->loc, "invalid operands to '?:': %s and %s",
                 ck_tn(k, ck_finalize(k, ops[0])->type), ck_tn(k, ck_finalize(k, ops[1])->type));
        return err(e);
    }
    pk_type t = ck_unify(k, ops, 2, e->loc, "operands to '?:'");
    if (is_err(t))
        return err(e);
    ck_apply(k, ops, 2, t, "operands to '?:'");
    e->lhs = ops[0];
    e->rhs = ops[1];
    e->type = t;
    uint16_t d = e->cond->depth;
    if (ops[0]->depth > d) d = ops[0]->depth;
    if (ops[1]->depth > d) d = ops[1]->depth;
    e->depth = (uint16_t)(d + 1);
    return e;
}

/* ------------------------------------------------------------ names, indexing, members */

static pk_expr *ck_name(checker *k, pk_expr *e, int flags) {
    pk_name *n = pk_intern(k->c, e->name, strlen(e->name));
    pk_var *v = n->local ? n->local : ck_global_const(k, n);
    if (!v) {
        pk_func *fs = ck_global_funcs(k, n);
        if (fs && fs->is_kernel)
            pk_error(k->c, e->loc, "'%s' is a kernel: kernels are run by nodes (or eng_launch), "
                     "not called or used as values", e->name);
        else if (fs)
            pk_error(k->c, e->loc, "'%s' is a function; call it with '%s(...)'", e->name, e->name);
        else if (n->builtin)
            pk_error(k->c, e->loc, "'%s' is a builtin function; call it with '%s(...)'", e->name,
                     e->name);
        else
            pk_error(k->c, e->loc, "unknown name '%s'", e->name);
        return err(e);
    }
    v->uses++;
    e->var = v;
    e->type = v->type;
    if (v->type.kind == PK_T_FIELD) {
        e->kind = PK_E_FIELD_REF;
        if (!(flags & CK_FIELD_OK)) {
            if (flags & CK_LVALUE)
                pk_error(k->c, e->loc,
                         "cannot assign to field '%s'; assign to its elements: %s[...] = ...",
                         v->name, v->name);
            else
                pk_error(k->c, e->loc,
                         "field '%s' cannot be used as a value; index it: %s[...]", v->name,
                         v->name);
            return err(e);
        }
        return e;
    }
    e->kind = PK_E_VAR;
    if (v->kind == PK_VAR_GLOBAL_CONST && v->state != 2) {
        if (v->state == 0)
            pk_error(k->c, e->loc, "constant '%s' is used before its declaration", v->name);
        else if (v->state == 1)
            pk_error(k->c, e->loc, "constant '%s' is defined in terms of itself", v->name);
        return err(e); /* state 3: its own error was reported */
    }
    return e;
}

static pk_expr *ck_field_index(checker *k, pk_expr *e, pk_expr *base) {
    pk_var *f = base->var;
    int dim = f->type.dim;
    pk_expr *index = NULL;
    if (dim == 0) {
        if (e->nargs != 0) {
            pk_error(k->c, e->args[0]->loc, "'%s' is a 0-D field; access it as %s[]", f->name,
                     f->name);
            return err(e);
        }
    } else if (e->nargs == 1) {
        pk_type it = pk_field_index_type(dim);
        char what[64];
        snprintf(what, sizeof what, "the index of '%s'", f->name);
        index = ck_expr_to(k, e->args[0], it, what);
        if (is_err(index->type))
            return err(e);
    } else if ((int)e->nargs == dim) {
        pk_expr *ctor = ck_new(k, PK_E_CONSTRUCT, pk_field_index_type(dim), e->loc);
        ctor->args = pk_alloc(k->c, sizeof(pk_expr *) * (size_t)dim);
        ctor->nargs = (uint32_t)dim;
        uint16_t d = 0;
        for (int i = 0; i < dim; i++) {
            ctor->args[i] = ck_expr_to(k, e->args[i], T(PK_T_I32), "a field index");
            if (is_err(ctor->args[i]->type))
                return err(e);
            if (ctor->args[i]->depth > d)
                d = ctor->args[i]->depth;
        }
        ctor->depth = (uint16_t)(d + 1);
        index = ctor;
    } else {
        pk_loc at = e->nargs ? e->args[0]->loc : e->loc;
        if (dim == 1)
            pk_error(k->c, at, "'%s' is a 1-D field; index it with one i32", f->name);
        else
            pk_error(k->c, at, "'%s' is a %d-D field; index it with an ivec%d or %d integers",
                     f->name, dim, dim, dim);
        return err(e);
    }
    e->kind = PK_E_FIELD_ACCESS;
    e->var = f;
    e->index = index;
    e->lhs = NULL;
    e->args = NULL;
    e->nargs = 0;
    e->type = T(f->type.elem);
    e->depth = (uint16_t)(index ? index->depth + 1 : 1);
    return e;
}

static pk_expr *ck_index(checker *k, pk_expr *e, int flags) {
    pk_expr *base = ck_expr(k, e->lhs, CK_FIELD_OK | (flags & CK_LVALUE));
    e->lhs = base;
    if (is_err(base->type))
        return err(e);
    if (base->kind == PK_E_FIELD_REF) {
        e = ck_field_index(k, e, base);
        if (!is_err(e->type) && !(flags & CK_LVALUE))
            ck_mark_field(k, e->var, PK_ACCESS_READ);
        return e;
    }
    base = ck_finalize(k, base);
    pk_type t = base->type;
    if (!is_vecmat(t)) {
        pk_error(k->c, e->loc, "cannot index a value of type %s", ck_tn(k, t));
        return err(e);
    }
    if (e->nargs != 1) {
        pk_error(k->c, e->loc, "a %s component index takes one i32", ck_tn(k, t));
        return err(e);
    }
    pk_expr *ix = ck_expr_to(k, e->args[0], T(PK_T_I32), "a component index");
    if (is_err(ix->type))
        return err(e);
    int n = t.kind == PK_T_MAT3 ? 3 : pk_type_components(t);
    pk_value v;
    if (pk_const_eval(k->c, ix, &v, NULL) && (v.i[0] < 0 || v.i[0] >= n)) {
        pk_error(k->c, ix->loc, "component index %lld is out of range for %s",
                 (long long)v.i[0], ck_tn(k, t));
        return err(e);
    }
    e->kind = PK_E_COMPONENT;
    e->rhs = ix;
    e->args = NULL;
    e->nargs = 0;
    e->type = t.kind == PK_T_MAT3 ? T(PK_T_VEC3) : pk_type_scalar(t);
    e->depth = (uint16_t)((base->depth > ix->depth ? base->depth : ix->depth) + 1);
    return e;
}

static pk_expr *ck_member(checker *k, pk_expr *e, int flags) {
    pk_expr *base = ck_expr(k, e->lhs, CK_FIELD_OK | (flags & CK_LVALUE));
    e->lhs = base;
    if (is_err(base->type))
        return err(e);
    if (base->kind == PK_E_FIELD_REF) {
        pk_error(k->c, e->loc, "field '%s' has no members; index it first: %s[...].%s",
                 base->var->name, base->var->name, e->name);
        return err(e);
    }
    base = ck_finalize(k, base);
    pk_type t = base->type;
    if (!pk_is_vector_kind(t.kind)) {
        pk_error(k->c, e->loc, "a value of type %s has no member '%s'", ck_tn(k, t), e->name);
        return err(e);
    }
    size_t len = strlen(e->name);
    int n = pk_type_components(t);
    if (len > 4) {
        pk_error(k->c, e->loc, "swizzle '%s' has more than 4 components", e->name);
        return err(e);
    }
    for (size_t i = 0; i < len; i++) {
        const char *pos = strchr("xyzw", e->name[i]);
        if (!pos || e->name[i] == 0) {
            pk_error(k->c, e->loc, "%s has no member '%s' (use x, y, z, w)", ck_tn(k, t), e->name);
            return err(e);
        }
        int c = (int)(pos - "xyzw");
        if (c >= n) {
            pk_error(k->c, e->loc, "%s has no component '%c'", ck_tn(k, t), e->name[i]);
            return err(e);
        }
        e->swz[i] = (uint8_t)c;
    }
    e->nswz = (uint8_t)len;
    pk_type el = pk_type_scalar(t);
    pk_type rt;
    if (len == 1)
        rt = el;
    else if (el.kind == PK_T_F32)
        rt = T(len == 2 ? PK_T_VEC2 : len == 3 ? PK_T_VEC3 : PK_T_VEC4);
    else if (len <= 3)
        rt = T(len == 2 ? PK_T_IVEC2 : PK_T_IVEC3);
    else {
        pk_error(k->c, e->loc, "swizzle '%s' would make an ivec4, which does not exist", e->name);
        return err(e);
    }
    e->kind = PK_E_SWIZZLE;
    e->type = rt;
    e->depth = (uint16_t)(base->depth + 1);
    return e;
}

pk_expr *ck_expr(checker *k, pk_expr *e, int flags) {
    k->weight += k->unroll;
    switch (e->kind) {
    case PK_E_INT:
        if (!e->untyped && !fits(e->ival, e->type.kind)) {
            pk_error(k->c, e->loc, "%s %lld does not fit in %s",
                     e->folded ? "the constant expression's value" : "integer literal", (long long)e->ival,
                     pk_type_kind_name(e->type.kind));
            return err(e);
        }
        return e;
    case PK_E_FLOAT:
        if (!e->untyped && !float_lit_fits(k, e, e->type.kind))
            return err(e);
        return e;
    case PK_E_BOOL:
        return e;
    case PK_E_NAME:
        return ck_name(k, e, flags);
    case PK_E_UNARY:
        return ck_unary(k, e);
    case PK_E_BINARY:
        return ck_binary(k, e);
    case PK_E_SELECT:
        return ck_select(k, e);
    case PK_E_INDEX:
        return ck_index(k, e, flags);
    case PK_E_MEMBER:
        return ck_member(k, e, flags);
    case PK_E_CALL_NAME: {
        pk_expr *r = ck_call(k, e);
        if (r->type.kind == PK_T_VOID && !(flags & CK_VOID_OK)) {
            pk_error(k->c, r->loc, "'%s' does not return a value", e->name);
            return err(r);
        }
        return r;
    }
    default:
        /* already checked (shared subtrees never occur; this is defensive) */
        return e;
    }
}
