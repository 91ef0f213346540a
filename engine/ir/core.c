/* Tasks, blocks, statements and their links; walks; static tables of op names. */
#include "engine/ir/ir_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- types ---- */

int ir_type_is_int(ir_type t) { return t == IR_I32 || t == IR_I64 || t == IR_U32; }
int ir_type_is_float(ir_type t) { return t == IR_F32 || t == IR_F64; }
int ir_type_is_signed(ir_type t) { return t == IR_I32 || t == IR_I64; }

int ir_type_size(ir_type t)
{
    if (IR_IS_PTR(t) || t == IR_CELL)
        return 8;
    switch (t) {
    case IR_BOOL: return 1;
    case IR_I32: case IR_U32: case IR_F32: return 4;
    case IR_I64: case IR_F64: return 8;
    default: return 0;
    }
}

const char *ir_type_name(ir_type t)
{
    static const char *const scal[] = {"void", "bool", "i32", "i64", "u32", "f32", "f64", "cell"};
    static const char *const ptr[] = {"ptr<void>", "ptr<bool>", "ptr<i32>", "ptr<i64>",
                                      "ptr<u32>", "ptr<f32>", "ptr<f64>", "ptr<cell>"};
    if (t == IR_TYPE_INFER)
        return "?";
    if (IR_IS_PTR(t))
        return IR_POINTEE(t) <= IR_CELL ? ptr[IR_POINTEE(t)] : "ptr<?>";
    return t <= IR_CELL ? scal[t] : "?";
}

int ir_level_is_sparse(const ir_level *l)
{
    return l->kind == IR_KIND_POINTER || l->kind == IR_KIND_BITMASKED || l->kind == IR_KIND_DYNAMIC;
}

int ir_same_tree(const ir_task *t, uint32_t a, uint32_t b)
{
    if (a == b)
        return 1;
    if (a >= t->nfields || b >= t->nfields)
        return 0;
    return t->fields[a].tree_key && t->fields[a].tree_key == t->fields[b].tree_key;
}

uint32_t ir_tree_slot(const ir_task *t, uint32_t slot)
{
    for (uint32_t j = 0; j < slot; j++)
        if (ir_same_tree(t, slot, j))
            return j;
    return slot;
}

int ir_level_has_alloc(const ir_level *l)
{
    return l->kind == IR_KIND_POINTER || l->kind == IR_KIND_DYNAMIC;
}

const char *ir_snode_kind_name(int kind)
{
    static const char *const n[] = {"root", "dense", "pointer", "bitmasked", "dynamic"};
    return kind >= 0 && kind <= IR_KIND_DYNAMIC ? n[kind] : "?";
}

/* ---- op tables ---- */

static const char *const op_names[IR_OP_COUNT] = {
    [IR_CONST] = "const", [IR_ARG] = "arg", [IR_UNARY] = "unary", [IR_BINARY] = "binary",
    [IR_SELECT] = "select", [IR_CAST] = "cast", [IR_FMA] = "fma", [IR_ALLOCA] = "alloca", [IR_LOAD] = "load",
    [IR_STORE] = "store", [IR_GLOBAL_PTR] = "global_ptr", [IR_GTMP_PTR] = "gtmp_ptr",
    [IR_GLOBAL_LOAD] = "global_load", [IR_GLOBAL_STORE] = "global_store", [IR_ATOMIC] = "atomic",
    [IR_IS_ACTIVE] = "is_active", [IR_ACTIVATE] = "activate", [IR_DEACTIVATE] = "deactivate",
    [IR_IF] = "if", [IR_RANGE_FOR] = "range_for", [IR_STRUCT_FOR] = "struct_for",
    [IR_WHILE] = "while", [IR_LOOP_INDEX] = "loop_index", [IR_BREAK] = "break",
    [IR_CONTINUE] = "continue", [IR_SN_ROOT] = "sn_root", [IR_SN_CHILD] = "sn_child",
    [IR_SN_INDEX] = "sn_index", [IR_SN_LOOKUP] = "sn_lookup", [IR_SN_FIELD_PTR] = "sn_field_ptr",
    [IR_SN_IS_ACTIVE] = "sn_is_active", [IR_SN_ACTIVATE] = "sn_activate",
    [IR_SN_DEACTIVATE] = "sn_deactivate",
};

const char *ir_op_name(int op)
{
    return op >= 0 && op < IR_OP_COUNT && op_names[op] ? op_names[op] : "?";
}

const char *ir_unop_name(int u)
{
    static const char *const n[IR_UNOP_COUNT] = {"neg", "not", "bitnot", "sqrt", "exp", "log",
                                                 "sin", "cos", "tan", "floor", "ceil", "round",
                                                 "trunc", "abs"};
    return u >= 0 && u < IR_UNOP_COUNT ? n[u] : "?";
}

const char *ir_binop_name(int b)
{
    static const char *const n[IR_BINOP_COUNT] = {"add", "sub", "mul", "div", "mod", "min",
                                                  "max", "pow", "atan2", "and", "or", "xor",
                                                  "shl", "shr", "lt", "le", "gt", "ge", "eq",
                                                  "ne"};
    return b >= 0 && b < IR_BINOP_COUNT ? n[b] : "?";
}

const char *ir_atomic_name(int a)
{
    static const char *const n[IR_ATOMIC_COUNT] = {"add", "sub", "min", "max", "mul", "div"};
    if (a == IR_ATOMIC_ACTIVATE)
        return "activate";
    return a >= 0 && a < IR_ATOMIC_COUNT ? n[a] : "?";
}

int ir_binop_is_cmp(int b) { return b >= IR_LT && b <= IR_NE; }

int ir_op_is_loop(int op) { return op == IR_RANGE_FOR || op == IR_STRUCT_FOR || op == IR_WHILE; }

int ir_op_has_effect(const ir_stmt *s)
{
    switch (s->op) {
    case IR_STORE: case IR_GLOBAL_STORE: case IR_ATOMIC: case IR_ACTIVATE: case IR_DEACTIVATE:
    case IR_IF: case IR_RANGE_FOR: case IR_STRUCT_FOR: case IR_WHILE: case IR_BREAK:
    case IR_CONTINUE: case IR_SN_ACTIVATE: case IR_SN_DEACTIVATE:
        return 1;
    case IR_SN_LOOKUP: case IR_SN_FIELD_PTR:
        return s->activate != 0;
    default:
        return 0;
    }
}

/* ---- tasks ---- */

ir_task *ir_task_new(int kind, const char *name, const ir_field_info *fields, uint32_t nfields,
                     const ir_type *arg_types, uint32_t nargs)
{
    ir_arena *a = ir_arena_new();
    if (!a)
        return NULL;
    ir_task *t = ir_arena_alloc(a, sizeof *t);
    if (!t) {
        ir_arena_free(a);
        return NULL;
    }
    t->arena = a;
    t->kind = (uint8_t)kind;
    snprintf(t->name, sizeof t->name, "%s", name ? name : "");
    t->body = ir_block_new(t, NULL);
    t->nfields = (uint16_t)nfields;
    t->nargs = nargs;
    if (nfields) {
        t->fields = ir_alloc(t, nfields * sizeof *t->fields);
        if (t->fields)
            memcpy(t->fields, fields, nfields * sizeof *t->fields);
    }
    if (nargs) {
        t->arg_types = ir_alloc(t, nargs * sizeof *t->arg_types);
        if (t->arg_types)
            memcpy(t->arg_types, arg_types, nargs * sizeof *t->arg_types);
    }
    if (!t->body || (nfields && !t->fields) || (nargs && !t->arg_types)) {
        ir_arena_free(a);
        return NULL;
    }
    return t;
}

void ir_task_free(ir_task *t)
{
    if (t)
        ir_arena_free(t->arena);
}

size_t ir_task_bytes(const ir_task *t) { return t ? ir_arena_bytes(t->arena) : 0; }

void *ir_alloc(ir_task *t, size_t bytes) { return ir_arena_alloc(t->arena, bytes); }

ir_block *ir_block_new(ir_task *t, ir_stmt *owner)
{
    ir_block *b = ir_alloc(t, sizeof *b);
    if (b)
        b->owner = owner;
    return b;
}

ir_stmt *ir_stmt_new(ir_task *t, int op, ir_type ty)
{
    ir_stmt *s = ir_alloc(t, sizeof *s);
    if (!s)
        return NULL;
    s->op = (uint8_t)op;
    s->ty = ty;
    if (op == IR_IF || ir_op_is_loop(op)) {
        s->body = ir_block_new(t, s);
        if (!s->body)
            return NULL;
        if (op == IR_IF && !(s->els = ir_block_new(t, s)))
            return NULL;
    }
    return s;
}

/* ---- links ---- */

void ir_insert_before(ir_stmt *pos, ir_stmt *s)
{
    ir_block *b = pos->parent;
    s->parent = b;
    s->next = pos;
    s->prev = pos->prev;
    if (pos->prev)
        pos->prev->next = s;
    else
        b->first = s;
    pos->prev = s;
}

void ir_insert_after(ir_stmt *pos, ir_stmt *s)
{
    if (pos->next) {
        ir_insert_before(pos->next, s);
        return;
    }
    ir_append(pos->parent, s);
}

void ir_append(ir_block *b, ir_stmt *s)
{
    s->parent = b;
    s->next = NULL;
    s->prev = b->last;
    if (b->last)
        b->last->next = s;
    else
        b->first = s;
    b->last = s;
}

void ir_prepend(ir_block *b, ir_stmt *s)
{
    if (b->first)
        ir_insert_before(b->first, s);
    else
        ir_append(b, s);
}

void ir_unlink(ir_stmt *s)
{
    ir_block *b = s->parent;
    if (!b)
        return;
    if (s->prev)
        s->prev->next = s->next;
    else
        b->first = s->next;
    if (s->next)
        s->next->prev = s->prev;
    else
        b->last = s->prev;
    s->prev = s->next = NULL;
    s->parent = NULL;
}

void ir_move_after(ir_stmt *pos, ir_block *to)
{
    ir_stmt *s = pos->next;
    while (s) {
        ir_stmt *n = s->next;
        ir_unlink(s);
        ir_append(to, s);
        s = n;
    }
}

/* ---- walks ---- */

int ir_walk(ir_block *b, ir_visit_fn fn, void *ud)
{
    for (ir_stmt *s = b->first, *n; s; s = n) {
        n = s->next; /* fn may unlink s */
        int r = fn(s, ud);
        if (r)
            return r;
        if (s->body && (r = ir_walk(s->body, fn, ud)))
            return r;
        if (s->els && (r = ir_walk(s->els, fn, ud)))
            return r;
    }
    return 0;
}

static int number_one(ir_stmt *s, void *ud)
{
    uint32_t *n = ud;
    s->id = (*n)++;
    return 0;
}

uint32_t ir_task_number(ir_task *t)
{
    uint32_t n = 0;
    ir_walk(t->body, number_one, &n);
    return n;
}

ir_stmt *ir_resolve(ir_stmt *s)
{
    while (s && s->repl)
        s = s->repl;
    return s;
}

static int resolve_one(ir_stmt *s, void *ud)
{
    (void)ud;
    for (int i = 0; i < s->nargs; i++)
        s->arg[i] = ir_resolve(s->arg[i]);
    if (s->loop)
        s->loop = ir_resolve(s->loop);
    return 0;
}

static int clear_repl(ir_stmt *s, void *ud)
{
    (void)ud;
    s->repl = NULL;
    return 0;
}

void ir_task_replace_uses(ir_task *t)
{
    ir_walk(t->body, resolve_one, NULL);
    ir_walk(t->body, clear_repl, NULL);
}

static int zero_mark(ir_stmt *s, void *ud)
{
    (void)ud;
    s->mark = 0;
    return 0;
}

static int count_one(ir_stmt *s, void *ud)
{
    (void)ud;
    for (int i = 0; i < s->nargs; i++)
        if (s->arg[i])
            s->arg[i]->mark++;
    if (s->loop)
        s->loop->mark++;
    return 0;
}

void ir_task_count_uses(ir_task *t)
{
    ir_walk(t->body, zero_mark, NULL);
    ir_walk(t->body, count_one, NULL);
}

/* ---- text buffer ---- */

void ir_buf_puts(ir_buf *b, const char *s)
{
    ir_buf_printf(b, "%s", s);
}

void ir_buf_printf(ir_buf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if (b->s && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 1024;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->failed = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

char *ir_buf_finish(ir_buf *b)
{
    if (b->failed) {
        free(b->s);
        return NULL;
    }
    if (!b->s) {
        b->s = malloc(1);
        if (b->s)
            b->s[0] = 0;
    }
    return b->s;
}

void ir_buf_float(ir_buf *b, ir_type ty, double v)
{
    char tmp[64];
    if (v != v) {
        ir_buf_puts(b, "nan");
        return;
    }
    if (v == 1.0 / 0.0 || v == -1.0 / 0.0) {
        ir_buf_puts(b, v > 0 ? "inf" : "-inf");
        return;
    }
    snprintf(tmp, sizeof tmp, ty == IR_F32 ? "%.9g" : "%.17g", v);
    /* Shortest form that reads back the same value, for stable and readable dumps. */
    for (int prec = 1; prec <= 17; prec++) {
        char t2[64];
        snprintf(t2, sizeof t2, "%.*g", prec, v);
        double back = strtod(t2, NULL);
        if (ty == IR_F32 ? (float)back == (float)v : back == v) {
            memcpy(tmp, t2, sizeof t2);
            break;
        }
    }
    if (!strpbrk(tmp, ".en"))
        strcat(tmp, ".0");
    ir_buf_puts(b, tmp);
}
