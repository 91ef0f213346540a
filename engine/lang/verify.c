/* verify.c — checks that a checked program keeps the promises of ast.h (every expression
 * typed, no parser-only node left, operands of matching types, names resolved). Run after
 * every successful check; a failure is a front-end bug reported as an internal error rather
 * than handed to the lowering. */
#include <stdarg.h>
#include <stdio.h>

#include "engine/lang/lang_internal.h"

typedef struct vf {
    char *msg;
    size_t size;
    bool bad;
} vf;

static bool fail(vf *v, pk_loc loc, const char *fmt, ...) {
    if (v->bad)
        return false;
    v->bad = true;
    int n = snprintf(v->msg, v->size, "%s:%u:%u: ", loc.file ? loc.file : "?", loc.line, loc.col);
    if (n < 0 || (size_t)n >= v->size)
        return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->msg + n, v->size - (size_t)n, fmt, ap);
    va_end(ap);
    return false;
}

static bool same(pk_type a, pk_type b) { return pk_type_eq(a, b); }
static bool is_vm(pk_type t) { return pk_is_vector_kind(t.kind) || t.kind == PK_T_MAT3; }

static bool expr(vf *v, const pk_expr *e);

static bool kids(vf *v, const pk_expr *e) {
    if (e->lhs && !expr(v, e->lhs))
        return false;
    if (e->rhs && !expr(v, e->rhs))
        return false;
    if (e->cond && !expr(v, e->cond))
        return false;
    if (e->index && !expr(v, e->index))
        return false;
    for (uint32_t i = 0; i < e->nargs; i++)
        if (!e->args[i] || !expr(v, e->args[i]))
            return false;
    return true;
}

static bool expr(vf *v, const pk_expr *e) {
    pk_type t = e->type;
    if (t.kind == PK_T_ERROR || t.kind >= PK_T_COUNT)
        return fail(v, e->loc, "expression without a type");
    if (e->untyped)
        return fail(v, e->loc, "untyped literal left");
    switch (e->kind) {
    case PK_E_INT:
        if (!pk_is_int_kind(t.kind))
            return fail(v, e->loc, "integer literal of type %s", pk_type_kind_name(t.kind));
        return true;
    case PK_E_FLOAT:
        if (!pk_is_float_kind(t.kind))
            return fail(v, e->loc, "float literal of type %s", pk_type_kind_name(t.kind));
        return true;
    case PK_E_BOOL:
        return t.kind == PK_T_BOOL || fail(v, e->loc, "bool literal not bool");
    case PK_E_VAR:
        if (!e->var || !same(e->var->type, t) || t.kind == PK_T_FIELD)
            return fail(v, e->loc, "bad variable reference");
        return true;
    case PK_E_FIELD_REF:
        if (!e->var || t.kind != PK_T_FIELD)
            return fail(v, e->loc, "bad field reference");
        return true;
    case PK_E_FIELD_ACCESS:
        if (!e->var || e->var->type.kind != PK_T_FIELD || t.kind != e->var->type.elem)
            return fail(v, e->loc, "bad field access");
        if (e->var->type.dim == 0 ? e->index != NULL
                                  : !e->index || !same(e->index->type, pk_field_index_type(e->var->type.dim)))
            return fail(v, e->loc, "bad field index");
        return kids(v, e);
    case PK_E_UNARY:
        if (!e->lhs || !same(e->lhs->type, t))
            return fail(v, e->loc, "unary operand type");
        return kids(v, e);
    case PK_E_BINARY: {
        if (!e->lhs || !e->rhs)
            return fail(v, e->loc, "binary without operands");
        pk_type a = e->lhs->type, b = e->rhs->type;
        if (e->op == PK_OP_MATMUL) {
            if (a.kind != PK_T_MAT3 || !same(b, t) || (b.kind != PK_T_MAT3 && b.kind != PK_T_VEC3))
                return fail(v, e->loc, "bad matmul");
        } else if (e->op >= PK_OP_LT && e->op <= PK_OP_OR) {
            if (t.kind != PK_T_BOOL || !same(a, b) || is_vm(a))
                return fail(v, e->loc, "bad comparison or logical operator");
        } else if (!same(a, t) || !same(b, t)) {
            return fail(v, e->loc, "operands of '%s' do not have the result type", pk_op_symbol(e->op));
        }
        return kids(v, e);
    }
    case PK_E_SELECT:
        if (!e->cond || e->cond->type.kind != PK_T_BOOL || !same(e->lhs->type, t) ||
            !same(e->rhs->type, t))
            return fail(v, e->loc, "bad select");
        return kids(v, e);
    case PK_E_CALL:
        if (!e->func || e->nargs != e->func->nparams)
            return fail(v, e->loc, "bad call");
        for (uint32_t i = 0; i < e->nargs; i++)
            if (!same(e->args[i]->type, e->func->params[i]->type))
                return fail(v, e->loc, "argument %u has the wrong type", i + 1);
        return kids(v, e);
    case PK_E_BUILTIN:
        if (e->builtin == PK_B_NONE || e->builtin >= PK_B_COUNT)
            return fail(v, e->loc, "bad builtin");
        return kids(v, e);
    case PK_E_CAST:
        if (!e->lhs || pk_type_components(e->lhs->type) != pk_type_components(t))
            return fail(v, e->loc, "bad cast");
        return kids(v, e);
    case PK_E_SPLAT:
        if (!e->lhs || !is_vm(t) || !same(e->lhs->type, pk_type_scalar(t)))
            return fail(v, e->loc, "bad splat");
        return kids(v, e);
    case PK_E_CONSTRUCT: {
        int n = 0;
        for (uint32_t i = 0; i < e->nargs; i++) {
            if (pk_type_scalar(e->args[i]->type).kind != pk_type_scalar(t).kind)
                return fail(v, e->loc, "constructor argument of the wrong element type");
            n += pk_type_components(e->args[i]->type);
        }
        if (n != pk_type_components(t) && !(t.kind == PK_T_MAT3 && n == 1))
            return fail(v, e->loc, "constructor with %d components", n);
        return kids(v, e);
    }
    case PK_E_SWIZZLE:
        if (!e->lhs || !pk_is_vector_kind(e->lhs->type.kind) || e->nswz < 1 || e->nswz > 4)
            return fail(v, e->loc, "bad swizzle");
        return kids(v, e);
    case PK_E_COMPONENT:
        if (!e->lhs || !e->rhs || !is_vm(e->lhs->type) || e->rhs->type.kind != PK_T_I32)
            return fail(v, e->loc, "bad component index");
        return kids(v, e);
    default:
        return fail(v, e->loc, "unresolved expression kind %d", e->kind);
    }
}

static bool stmt(vf *v, const pk_stmt *s) {
    switch (s->kind) {
    case PK_S_BLOCK:
        for (uint32_t i = 0; i < s->nbody; i++)
            if (!stmt(v, s->body[i]))
                return false;
        return true;
    case PK_S_DECL:
        if (!s->var || !s->value || !same(s->var->type, s->value->type))
            return fail(v, s->loc, "bad declaration");
        return expr(v, s->value);
    case PK_S_ASSIGN:
        if (!s->lhs || !s->value || !same(s->lhs->type, s->value->type))
            return fail(v, s->loc, "bad assignment");
        return expr(v, s->lhs) && expr(v, s->value);
    case PK_S_EXPR:
        if (!s->value || (s->value->kind != PK_E_CALL && s->value->kind != PK_E_BUILTIN))
            return fail(v, s->loc, "expression statement without a call");
        return expr(v, s->value);
    case PK_S_IF:
        if (!s->cond || s->cond->type.kind != PK_T_BOOL || !s->then)
            return fail(v, s->loc, "bad if");
        return expr(v, s->cond) && stmt(v, s->then) && (!s->els || stmt(v, s->els));
    case PK_S_WHILE:
        if (!s->cond || s->cond->type.kind != PK_T_BOOL || !s->then)
            return fail(v, s->loc, "bad while");
        return expr(v, s->cond) && stmt(v, s->then);
    case PK_S_FOR_RANGE:
        if (!s->var || !s->lo || !s->hi || !same(s->lo->type, s->var->type) ||
            !same(s->hi->type, s->var->type))
            return fail(v, s->loc, "bad range loop");
        return expr(v, s->lo) && expr(v, s->hi) && stmt(v, s->then);
    case PK_S_FOR_FIELD:
        if (!s->var || !s->field || !s->parallel ||
            !same(s->var->type, pk_field_index_type(s->field->type.dim)))
            return fail(v, s->loc, "bad struct-for");
        return stmt(v, s->then);
    case PK_S_FOR_STATIC:
        if (!s->var || s->var->type.kind != PK_T_I32)
            return fail(v, s->loc, "bad static loop");
        return stmt(v, s->then);
    case PK_S_BREAK:
    case PK_S_CONTINUE:
        return s->loop != NULL || fail(v, s->loc, "break/continue without a loop");
    case PK_S_RETURN:
        return !s->value || expr(v, s->value);
    default:
        return fail(v, s->loc, "unknown statement kind %d", s->kind);
    }
}

int pk_verify(const pk_program *prog, char *msg, size_t size) {
    vf v = {msg, size, false};
    if (size)
        msg[0] = 0;
    for (uint32_t i = 0; i < prog->nconsts; i++) {
        const pk_var *c = prog->consts[i];
        if (!c->value || !c->init || !expr(&v, c->init))
            return fail(&v, c->loc, "bad constant"), 0;
    }
    for (uint32_t i = 0; i < prog->nfuncs; i++) {
        const pk_func *f = prog->funcs[i];
        for (uint32_t j = 0; j < f->nparams; j++)
            if (f->params[j]->type.kind == PK_T_ERROR || f->params[j]->slot != j)
                return fail(&v, f->params[j]->loc, "bad parameter"), 0;
        if (!f->body || !stmt(&v, f->body))
            return fail(&v, f->loc, "bad body"), 0;
    }
    return !v.bad;
}
