/* ast_print.c — the checked AST as S-expressions (format in docs/language.md, "AST dump"):
 * for tests written by hand from the grammar, and for people debugging the front end.
 * Uses its own malloc'd buffer: the program is read-only. */
#include <stdarg.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lang/lang.h"

typedef struct out {
    char *data;
    size_t len, cap;
    int oom;
} out;

static void put(out *o, const char *s, size_t n) {
    if (o->oom)
        return;
    if (o->len + n + 1 > o->cap) {
        size_t ncap = o->cap ? o->cap * 2 : 1024;
        while (ncap < o->len + n + 1)
            ncap *= 2;
        char *p = realloc(o->data, ncap);
        if (!p) {
            o->oom = 1;
            return;
        }
        o->data = p;
        o->cap = ncap;
    }
    memcpy(o->data + o->len, s, n);
    o->len += n;
    o->data[o->len] = 0;
}

static void puts_(out *o, const char *s) { put(o, s, strlen(s)); }

static void printf_(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void printf_(out *o, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(o, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static const char *tn(pk_type t, char *buf) { return pk_type_name(t, buf, 48); }

/* Shortest decimal that reads back as the same value (of the literal's precision), with a
 * '.' whatever the locale. */
static void put_float(out *o, double v, int is_f32) {
    char buf[64];
    if (isnan(v) || isinf(v)) { /* as ir.md prints them, whatever the C library's sign of a NaN */
        puts_(o, isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
        return;
    }
    if (is_f32) /* the value the program holds (16777217 is 16777216, 1e-50 is 0), not the text */
        v = (double)(float)v;
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, v);
        for (char *c = buf; *c; c++)
            if (*c == ',')
                *c = '.';
        double back = strtod(buf, NULL);
        if (is_f32 ? (float)back == (float)v : back == v)
            break;
    }
    puts_(o, buf);
}

static void expr(out *o, const pk_expr *e) {
    char b[48];
    switch (e->kind) {
    case PK_E_INT:
        printf_(o, "%lld:%s", (long long)e->ival, tn(e->type, b));
        return;
    case PK_E_FLOAT:
        put_float(o, e->fval, e->type.kind == PK_T_F32);
        printf_(o, ":%s", tn(e->type, b));
        return;
    case PK_E_BOOL:
        puts_(o, e->ival ? "true" : "false");
        return;
    case PK_E_VAR:
        puts_(o, e->var ? e->var->name : "?");
        return;
    case PK_E_FIELD_REF:
        printf_(o, "@%s", e->var ? e->var->name : "?");
        return;
    case PK_E_FIELD_ACCESS:
        printf_(o, "(fa %s %s", tn(e->type, b), e->var ? e->var->name : "?");
        if (e->index) {
            puts_(o, " ");
            expr(o, e->index);
        }
        puts_(o, ")");
        return;
    default:
        break;
    }
    const char *head;
    switch (e->kind) {
    case PK_E_UNARY: case PK_E_BINARY: head = pk_op_name(e->op); break;
    case PK_E_SELECT: head = "select"; break;
    case PK_E_CALL: head = "call"; break;
    case PK_E_BUILTIN: head = pk_builtin_name(e->builtin); break;
    case PK_E_CAST: head = e->implicit ? "conv" : "cast"; break;
    case PK_E_SPLAT: head = "splat"; break;
    case PK_E_CONSTRUCT: head = pk_type_kind_name(e->type.kind); break;
    case PK_E_COMPONENT: head = "comp"; break;
    case PK_E_SWIZZLE: {
        char sw[6] = ".";
        for (int i = 0; i < e->nswz && i < 4; i++)
            sw[i + 1] = "xyzw"[e->swz[i] & 3];
        sw[e->nswz < 5 ? e->nswz + 1 : 5] = 0;
        printf_(o, "(%s %s ", sw, tn(e->type, b));
        expr(o, e->lhs);
        puts_(o, ")");
        return;
    }
    default:
        printf_(o, "(?%d)", e->kind);
        return;
    }
    if (e->kind == PK_E_CONSTRUCT)
        printf_(o, "(%s", head);
    else
        printf_(o, "(%s %s", head, tn(e->type, b));
    if (e->kind == PK_E_CALL)
        printf_(o, " %s", e->func ? e->func->name : "?");
    const pk_expr *kids[3] = {e->cond, e->lhs, e->rhs};
    for (int i = 0; i < 3; i++)
        if (kids[i]) {
            puts_(o, " ");
            expr(o, kids[i]);
        }
    for (uint32_t i = 0; i < e->nargs; i++) {
        puts_(o, " ");
        expr(o, e->args[i]);
    }
    puts_(o, ")");
}

static void indent(out *o, int n) {
    puts_(o, "\n");
    for (int i = 0; i < n; i++)
        puts_(o, "  ");
}

static void stmt(out *o, const pk_stmt *s, int ind) {
    char b[48];
    switch (s->kind) {
    case PK_S_BLOCK:
        puts_(o, "(block");
        for (uint32_t i = 0; i < s->nbody; i++) {
            indent(o, ind + 1);
            stmt(o, s->body[i], ind + 1);
        }
        puts_(o, ")");
        return;
    case PK_S_DECL:
        printf_(o, "(%s %s %s ", s->var->is_const ? "const-decl" : "decl", s->var->name,
                tn(s->var->type, b));
        expr(o, s->value);
        puts_(o, ")");
        return;
    case PK_S_ASSIGN:
        if (s->op == PK_OP_NONE)
            puts_(o, "(assign = ");
        else
            printf_(o, "(assign %s=%s ", pk_op_symbol(s->op), s->atomic ? " atomic" : "");
        expr(o, s->lhs);
        puts_(o, " ");
        expr(o, s->value);
        puts_(o, ")");
        return;
    case PK_S_EXPR:
        puts_(o, "(expr ");
        expr(o, s->value);
        puts_(o, ")");
        return;
    case PK_S_IF:
        puts_(o, "(if ");
        expr(o, s->cond);
        indent(o, ind + 1);
        stmt(o, s->then, ind + 1);
        if (s->els) {
            indent(o, ind + 1);
            stmt(o, s->els, ind + 1);
        }
        puts_(o, ")");
        return;
    case PK_S_WHILE:
        puts_(o, "(while ");
        expr(o, s->cond);
        break;
    case PK_S_FOR_RANGE:
        printf_(o, "(for%s %s %s ", s->parallel ? " parallel" : "", s->var->name,
                tn(s->var->type, b));
        expr(o, s->lo);
        puts_(o, " ");
        expr(o, s->hi);
        break;
    case PK_S_FOR_FIELD:
        printf_(o, "(for-field parallel %s %s @%s", s->var->name, tn(s->var->type, b),
                s->field ? s->field->name : "?");
        break;
    case PK_S_FOR_STATIC:
        printf_(o, "(for-static %s %d %d", s->var->name, s->first, s->last);
        break;
    case PK_S_BREAK:
        puts_(o, "(break)");
        return;
    case PK_S_CONTINUE:
        puts_(o, "(continue)");
        return;
    case PK_S_RETURN:
        puts_(o, "(return");
        if (s->value) {
            puts_(o, " ");
            expr(o, s->value);
        }
        puts_(o, ")");
        return;
    default:
        printf_(o, "(?stmt %d)", s->kind);
        return;
    }
    /* loops: the body on the next line */
    indent(o, ind + 1);
    stmt(o, s->then, ind + 1);
    puts_(o, ")");
}

static void params(out *o, const pk_func *f) {
    char b[48];
    puts_(o, "(");
    for (uint32_t i = 0; i < f->nparams; i++) {
        const pk_var *p = f->params[i];
        if (i)
            puts_(o, " ");
        if (p->type.kind == PK_T_FIELD)
            printf_(o, "(field %s %s %d)", p->name, pk_type_kind_name(p->type.elem), p->type.dim);
        else
            printf_(o, "(param %s %s)", p->name, tn(p->type, b));
    }
    puts_(o, ")");
}

static bool from_stdlib_loc(const pk_loc *l) { return l->file && strcmp(l->file, "stdlib.pk") == 0; }

char *pk_print_program(const pk_program *prog, int flags) {
    out o = {0};
    char b[48];
    put(&o, "", 0);
    if (!prog)
        return o.data;
    for (uint32_t i = 0; i < prog->nconsts; i++) {
        const pk_var *c = prog->consts[i];
        (void)from_stdlib_loc;
        if (!(flags & PK_PRINT_STDLIB) && from_stdlib_loc(&c->loc))
            continue;
        printf_(&o, "(const %s %s ", c->name, tn(c->type, b));
        if (c->init)
            expr(&o, c->init);
        puts_(&o, ")\n");
    }
    for (uint32_t i = 0; i < prog->nfuncs; i++) {
        const pk_func *f = prog->funcs[i];
        if (!(flags & PK_PRINT_STDLIB) && f->from_stdlib)
            continue;
        if (f->is_kernel)
            printf_(&o, "(kernel %s ", f->name);
        else
            printf_(&o, "(func %s %s ", tn(f->ret, b), f->name);
        params(&o, f);
        indent(&o, 1);
        stmt(&o, f->body, 1);
        puts_(&o, ")\n");
    }
    if (o.oom) {
        free(o.data);
        return NULL;
    }
    return o.data;
}
