/* The verifier: structure, dominance, loop references, fields and types. It numbers the task
 * the way the printer does so that "$N" in a message names the printed statement. */
#include "engine/ir/ir_internal.h"

#include <stdio.h>

typedef struct vctx {
    ir_task *t;
    char *err;
    size_t errlen;
    ir_stmt *loops[256];
    int nloops;
} vctx;

static int fail(vctx *v, const ir_stmt *s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(vctx *v, const ir_stmt *s, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (v->err && v->errlen) {
        if (s)
            snprintf(v->err, v->errlen, "task '%s' $%u (%s): %s", v->t->name, s->id,
                     ir_op_name(s->op), msg);
        else
            snprintf(v->err, v->errlen, "task '%s': %s", v->t->name, msg);
    }
    return -1;
}

static int is_value_type(ir_type t)
{
    return t >= IR_BOOL && t <= IR_F64;
}

static int is_numeric(ir_type t)
{
    return ir_type_is_int(t) || ir_type_is_float(t);
}

static int arity(const ir_stmt *s, const ir_task *t)
{
    switch (s->op) {
    case IR_CONST: case IR_ARG: case IR_ALLOCA: case IR_GTMP_PTR: case IR_STRUCT_FOR:
    case IR_WHILE: case IR_LOOP_INDEX: case IR_BREAK: case IR_CONTINUE: case IR_SN_ROOT:
        return 0;
    case IR_UNARY: case IR_CAST: case IR_LOAD: case IR_GLOBAL_LOAD: case IR_IF: case IR_SN_CHILD:
        return 1;
    case IR_BINARY: case IR_STORE: case IR_GLOBAL_STORE: case IR_ATOMIC: case IR_RANGE_FOR:
    case IR_SN_LOOKUP: case IR_SN_FIELD_PTR: case IR_SN_IS_ACTIVE: case IR_SN_ACTIVATE:
    case IR_SN_DEACTIVATE:
        return 2;
    case IR_SELECT: case IR_FMA:
        return 3;
    case IR_GLOBAL_PTR: case IR_IS_ACTIVE: case IR_ACTIVATE: case IR_DEACTIVATE: case IR_SN_INDEX:
        return s->field < t->nfields ? t->fields[s->field].dim : -1;
    default:
        return -1;
    }
}

static int is_field_pointer(const ir_stmt *p)
{
    return p->op == IR_GLOBAL_PTR || p->op == IR_GTMP_PTR || p->op == IR_SN_FIELD_PTR;
}

static int check_types(vctx *v, ir_stmt *s)
{
    ir_task *t = v->t;
    ir_stmt *const *a = s->arg;
    if (s->ty == IR_TYPE_INFER)
        return fail(v, s, "type not inferred (run the typecheck pass)");
    for (int i = 0; i < s->nargs; i++)
        if (a[i]->ty == IR_TYPE_INFER)
            return fail(v, s, "operand $%u has no type yet", a[i]->id);
    const ir_field_info *f = s->field < t->nfields ? &t->fields[s->field] : NULL;
    switch (s->op) {
    case IR_CONST:
        if (!is_value_type(s->ty))
            return fail(v, s, "constant of type %s", ir_type_name(s->ty));
        break;
    case IR_ARG:
        if (s->index >= t->nargs)
            return fail(v, s, "argument #%u of %u", s->index, t->nargs);
        if (s->ty != t->arg_types[s->index])
            return fail(v, s, "argument #%u is %s, not %s", s->index,
                        ir_type_name(t->arg_types[s->index]), ir_type_name(s->ty));
        break;
    case IR_UNARY:
        if (s->sub >= IR_UNOP_COUNT)
            return fail(v, s, "bad unary op %u", s->sub);
        if (a[0]->ty != s->ty)
            return fail(v, s, "operand is %s, result %s", ir_type_name(a[0]->ty),
                        ir_type_name(s->ty));
        if (s->sub == IR_NOT ? s->ty != IR_BOOL
            : s->sub == IR_BITNOT ? !ir_type_is_int(s->ty)
            : (s->sub == IR_NEG || s->sub == IR_ABS) ? !is_numeric(s->ty)
            : !ir_type_is_float(s->ty))
            return fail(v, s, "%s of %s", ir_unop_name(s->sub), ir_type_name(s->ty));
        break;
    case IR_BINARY: {
        if (s->sub >= IR_BINOP_COUNT)
            return fail(v, s, "bad binary op %u", s->sub);
        ir_type ot = a[0]->ty;
        if (a[1]->ty != ot)
            return fail(v, s, "type mismatch: $%u is %s, $%u is %s", a[0]->id, ir_type_name(ot),
                        a[1]->id, ir_type_name(a[1]->ty));
        int b = s->sub, ok;
        if (ir_binop_is_cmp(b))
            ok = s->ty == IR_BOOL &&
                 (is_numeric(ot) || ((b == IR_EQ || b == IR_NE) && ot == IR_BOOL));
        else if (s->ty != ot)
            ok = 0;
        else if (b == IR_AND || b == IR_OR || b == IR_XOR)
            ok = ir_type_is_int(ot) || ot == IR_BOOL;
        else if (b == IR_SHL || b == IR_SHR)
            ok = ir_type_is_int(ot);
        else if (b == IR_POW || b == IR_ATAN2)
            ok = ir_type_is_float(ot);
        else
            ok = is_numeric(ot);
        if (!ok)
            return fail(v, s, "%s on %s giving %s", ir_binop_name(b), ir_type_name(ot),
                        ir_type_name(s->ty));
        break;
    }
    case IR_SELECT:
        if (a[0]->ty != IR_BOOL)
            return fail(v, s, "condition is %s", ir_type_name(a[0]->ty));
        if (a[1]->ty != s->ty || a[2]->ty != s->ty || !is_value_type(s->ty))
            return fail(v, s, "type mismatch: %s ? %s : %s", ir_type_name(s->ty),
                        ir_type_name(a[1]->ty), ir_type_name(a[2]->ty));
        break;
    case IR_FMA:
        if (!ir_type_is_float(s->ty) || a[0]->ty != s->ty || a[1]->ty != s->ty ||
            a[2]->ty != s->ty)
            return fail(v, s, "fma of %s, %s, %s giving %s", ir_type_name(a[0]->ty),
                        ir_type_name(a[1]->ty), ir_type_name(a[2]->ty), ir_type_name(s->ty));
        break;
    case IR_CAST:
        if (!is_value_type(s->ty) || !is_value_type(a[0]->ty))
            return fail(v, s, "cast from %s to %s", ir_type_name(a[0]->ty), ir_type_name(s->ty));
        break;
    case IR_ALLOCA:
        if (!IR_IS_PTR(s->ty) || !is_value_type(IR_POINTEE(s->ty)))
            return fail(v, s, "alloca of %s", ir_type_name(s->ty));
        break;
    case IR_LOAD:
    case IR_STORE:
        if (a[0]->op != IR_ALLOCA)
            return fail(v, s, "$%u is not an alloca", a[0]->id);
        if ((s->op == IR_LOAD ? s->ty : a[1]->ty) != IR_POINTEE(a[0]->ty))
            return fail(v, s, "type mismatch: %s through %s",
                        ir_type_name(s->op == IR_LOAD ? s->ty : a[1]->ty),
                        ir_type_name(a[0]->ty));
        break;
    case IR_GLOBAL_PTR:
        if (s->comp >= f->components)
            return fail(v, s, "component %u of a %u-component field", s->comp, f->components);
        if (s->ty != IR_PTR(f->elem))
            return fail(v, s, "type %s for a field of %s", ir_type_name(s->ty),
                        ir_type_name(f->elem));
        /* fallthrough */
    case IR_IS_ACTIVE: case IR_ACTIVATE: case IR_DEACTIVATE: case IR_SN_INDEX:
        for (int i = 0; i < s->nargs; i++)
            if (a[i]->ty != IR_I32)
                return fail(v, s, "index $%u is %s, not i32", a[i]->id, ir_type_name(a[i]->ty));
        if (s->ty != (s->op == IR_IS_ACTIVE ? IR_BOOL : s->op == IR_SN_INDEX ? IR_I32
                      : s->op == IR_GLOBAL_PTR ? s->ty : IR_VOID))
            return fail(v, s, "result type %s", ir_type_name(s->ty));
        break;
    case IR_GTMP_PTR:
        if (!IR_IS_PTR(s->ty) || !is_value_type(IR_POINTEE(s->ty)) || s->ival < 0 ||
            s->ival + ir_type_size(IR_POINTEE(s->ty)) > (int64_t)t->gtmp_bytes)
            return fail(v, s, "%s at offset %lld outside %u bytes of temporaries",
                        ir_type_name(s->ty), (long long)s->ival, t->gtmp_bytes);
        break;
    case IR_GLOBAL_LOAD: case IR_GLOBAL_STORE: case IR_ATOMIC: {
        if (!is_field_pointer(a[0]))
            return fail(v, s, "$%u is not a field or temporary pointer", a[0]->id);
        ir_type vt = s->op == IR_GLOBAL_STORE ? a[1]->ty : s->ty;
        if (vt != IR_POINTEE(a[0]->ty))
            return fail(v, s, "type mismatch: %s through %s", ir_type_name(vt),
                        ir_type_name(a[0]->ty));
        if (s->op == IR_ATOMIC && (s->sub >= IR_ATOMIC_COUNT || a[1]->ty != s->ty ||
                                   !is_numeric(s->ty)))
            return fail(v, s, "atomic %s on %s", ir_atomic_name(s->sub), ir_type_name(s->ty));
        break;
    }
    case IR_IF:
        if (a[0]->ty != IR_BOOL)
            return fail(v, s, "condition is %s", ir_type_name(a[0]->ty));
        break;
    case IR_RANGE_FOR:
        if (!ir_type_is_int(a[0]->ty) || a[1]->ty != a[0]->ty)
            return fail(v, s, "bounds of types %s and %s", ir_type_name(a[0]->ty),
                        ir_type_name(a[1]->ty));
        break;
    case IR_LOOP_INDEX: {
        ir_type want = s->loop->op == IR_RANGE_FOR ? s->loop->arg[0]->ty : IR_I32;
        if (s->ty != want)
            return fail(v, s, "index of type %s, loop gives %s", ir_type_name(s->ty),
                        ir_type_name(want));
        break;
    }
    case IR_SN_ROOT:
        if (s->ty != IR_CELL)
            return fail(v, s, "result type %s", ir_type_name(s->ty));
        break;
    case IR_SN_CHILD:
        if (s->ty != IR_CELL || a[0]->ty != IR_CELL)
            return fail(v, s, "cell operand expected");
        break;
    case IR_SN_LOOKUP: case IR_SN_FIELD_PTR: case IR_SN_IS_ACTIVE: case IR_SN_ACTIVATE:
    case IR_SN_DEACTIVATE:
        if (a[0]->ty != IR_CELL || a[1]->ty != IR_I32)
            return fail(v, s, "operands must be (cell, i32), are (%s, %s)",
                        ir_type_name(a[0]->ty), ir_type_name(a[1]->ty));
        if (s->op == IR_SN_FIELD_PTR &&
            (s->comp >= f->components || s->ty != IR_PTR(f->elem)))
            return fail(v, s, "component %u / type %s for this field", s->comp,
                        ir_type_name(s->ty));
        if (s->op == IR_SN_LOOKUP && s->ty != IR_CELL)
            return fail(v, s, "result type %s", ir_type_name(s->ty));
        if (s->op == IR_SN_IS_ACTIVE && s->ty != IR_BOOL)
            return fail(v, s, "result type %s", ir_type_name(s->ty));
        break;
    default:
        break;
    }
    if ((s->op == IR_STORE || s->op == IR_GLOBAL_STORE || s->op == IR_ACTIVATE ||
         s->op == IR_DEACTIVATE || s->op == IR_IF || ir_op_is_loop(s->op) || s->op == IR_BREAK ||
         s->op == IR_CONTINUE || s->op == IR_SN_ACTIVATE || s->op == IR_SN_DEACTIVATE) &&
        s->ty != IR_VOID)
        return fail(v, s, "has type %s, expected void", ir_type_name(s->ty));
    return 0;
}

static int check_field_level(vctx *v, ir_stmt *s)
{
    const ir_task *t = v->t;
    int uses_field = s->op == IR_GLOBAL_PTR || s->op == IR_IS_ACTIVE || s->op == IR_ACTIVATE ||
                     s->op == IR_DEACTIVATE || s->op == IR_STRUCT_FOR || s->op >= IR_SN_ROOT;
    if (!uses_field)
        return 0;
    if (s->field >= t->nfields)
        return fail(v, s, "field slot %u of %u", s->field, t->nfields);
    const ir_field_info *f = &t->fields[s->field];
    if (s->op == IR_STRUCT_FOR && f->dim == 0)
        return fail(v, s, "struct_for over a 0-D field");
    if (s->op >= IR_SN_CHILD && s->op != IR_SN_FIELD_PTR &&
        (s->level < 1 || s->level >= f->nlevels))
        return fail(v, s, "level %u outside 1..%u", s->level, f->nlevels - 1u);
    return 0;
}

static int in_loops(vctx *v, const ir_stmt *loop)
{
    for (int i = 0; i < v->nloops; i++)
        if (v->loops[i] == loop)
            return 1;
    return 0;
}

static int check_block(vctx *v, ir_block *b, ir_stmt *owner);

static int check_stmt(vctx *v, ir_stmt *s)
{
    ir_task *t = v->t;
    if (s->op >= IR_OP_COUNT)
        return fail(v, s, "unknown op %u", s->op);
    int n = arity(s, t);
    if (check_field_level(v, s))
        return -1;
    if (n < 0 || s->nargs != n)
        return fail(v, s, "%u operands, expected %d", s->nargs, n);
    for (int i = 0; i < s->nargs; i++) {
        if (!s->arg[i])
            return fail(v, s, "operand %d is missing", i);
        if (s->arg[i]->mark != 1)
            return fail(v, s, "operand $%u is used before its definition (or does not dominate "
                              "this use)", s->arg[i]->id);
        if (s->arg[i]->ty == IR_VOID)
            return fail(v, s, "operand $%u has no value", s->arg[i]->id);
    }
    int want_body = s->op == IR_IF || ir_op_is_loop(s->op);
    if (want_body != (s->body != NULL) || (s->op == IR_IF) != (s->els != NULL))
        return fail(v, s, "nested blocks do not match the op");
    if (s->op == IR_LOOP_INDEX || s->op == IR_BREAK || s->op == IR_CONTINUE) {
        if (!s->loop || !in_loops(v, s->loop))
            return fail(v, s, "refers to a loop that does not enclose it");
        if (s->op == IR_LOOP_INDEX) {
            if (s->loop->op == IR_WHILE)
                return fail(v, s, "a while loop has no index");
            uint32_t axes = s->loop->op == IR_STRUCT_FOR ? t->fields[s->loop->field].dim : 1u;
            if (s->index >= axes)
                return fail(v, s, "axis %u of a %u-axis loop", s->index, axes);
        } else {
            if (s->loop != v->loops[v->nloops - 1])
                return fail(v, s, "leaves a loop other than the innermost one");
            if (s->op == IR_BREAK && (s->loop->parallel || s->loop->op == IR_STRUCT_FOR))
                return fail(v, s, "break out of a parallel loop");
        }
    }
    if ((s->op == IR_RANGE_FOR && s->parallel) || s->op == IR_STRUCT_FOR) {
        int top = s->parent == t->body;
        int ok = top && (t->kind == IR_TASK_KERNEL ||
                         (t->kind == IR_TASK_RANGE_FOR && s->op == IR_RANGE_FOR) ||
                         (t->kind == IR_TASK_STRUCT_FOR && s->op == IR_STRUCT_FOR));
        if (!ok)
            return fail(v, s, "parallel loop outside a kernel's top level or its own task");
    }
    if (check_types(v, s))
        return -1;
    if (s->body) {
        int loop = ir_op_is_loop(s->op);
        if (loop) {
            if (v->nloops >= (int)(sizeof v->loops / sizeof v->loops[0]))
                return fail(v, s, "loops nested too deeply");
            v->loops[v->nloops++] = s;
        }
        if (check_block(v, s->body, s))
            return -1;
        if (s->els && check_block(v, s->els, s))
            return -1;
        if (loop)
            v->nloops--;
    }
    s->mark = 1;
    return 0;
}

static int check_block(vctx *v, ir_block *b, ir_stmt *owner)
{
    if (b->owner != owner)
        return fail(v, owner, "a nested block names another owner");
    ir_stmt *prev = NULL;
    for (ir_stmt *s = b->first; s; prev = s, s = s->next) {
        if (s->parent != b || s->prev != prev)
            return fail(v, s, "broken block links");
        if (check_stmt(v, s))
            return -1;
    }
    if (b->last != prev)
        return fail(v, owner, "broken block end");
    for (ir_stmt *s = b->first; s; s = s->next)
        s->mark = 2; /* out of scope from now on */
    return 0;
}

static int zero(ir_stmt *s, void *ud)
{
    (void)ud;
    s->mark = 0;
    return 0;
}

static int check_task_shape(vctx *v)
{
    ir_task *t = v->t;
    ir_block *b = t->body;
    switch (t->kind) {
    case IR_TASK_KERNEL:
    case IR_TASK_SERIAL:
        return 0;
    case IR_TASK_RANGE_FOR:
    case IR_TASK_STRUCT_FOR: {
        int want = t->kind == IR_TASK_RANGE_FOR ? IR_RANGE_FOR : IR_STRUCT_FOR;
        if (!b->last || b->last->op != want || (want == IR_RANGE_FOR && !b->last->parallel))
            return fail(v, b->last, "a %s task must end in its parallel loop",
                        want == IR_RANGE_FOR ? "range_for" : "struct_for");
        for (ir_stmt *s = b->first; s != b->last; s = s->next)
            if (ir_op_has_effect(s) || s->op == IR_ALLOCA)
                return fail(v, s, "the prologue of a loop task computes values only");
        if (want == IR_STRUCT_FOR && b->last->field != t->field)
            return fail(v, b->last, "loops over another field than its task");
        return 0;
    }
    case IR_TASK_CLEAR_LIST:
    case IR_TASK_LISTGEN:
    case IR_TASK_GC:
        if (b->first)
            return fail(v, b->first, "list and gc tasks have no body");
        if (t->field >= t->nfields || t->level < 1 || t->level >= t->fields[t->field].nlevels)
            return fail(v, NULL, "SNode (field %u, level %u) does not exist", t->field, t->level);
        return 0;
    default:
        return fail(v, NULL, "unknown task kind %u", t->kind);
    }
}

int ir_verify(ir_task *t, char *err, size_t errlen)
{
    vctx v = {.t = t, .err = err, .errlen = errlen};
    ir_task_number(t);
    ir_walk(t->body, zero, NULL);
    for (uint32_t i = 0; i < t->nfields; i++) {
        const ir_field_info *f = &t->fields[i];
        if (f->dim > IR_MAX_DIM || f->nlevels < 1 || f->nlevels > IR_MAX_LEVELS ||
            f->levels[0].kind != IR_KIND_ROOT || f->components < 1 || f->components > 4 ||
            (f->elem != IR_F32 && f->elem != IR_F64 && f->elem != IR_I32))
            return fail(&v, NULL, "field slot %u has a malformed descriptor", i);
        for (int l = 1; l < f->nlevels; l++)
            if (f->levels[l].kind < IR_KIND_DENSE || f->levels[l].kind > IR_KIND_DYNAMIC)
                return fail(&v, NULL, "field slot %u level %d has kind %u", i, l,
                            f->levels[l].kind);
    }
    if (check_task_shape(&v))
        return -1;
    if (check_block(&v, t->body, NULL))
        return -1;
    if (err && errlen)
        err[0] = 0;
    return 0;
}
