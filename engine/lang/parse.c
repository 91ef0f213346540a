/* parse.c — tokens to an untyped AST (recursive descent, precedence climbing for binary
 * operators). Syntax errors are reported and the parser resynchronizes at the next statement
 * (or top-level declaration), so one run reports several independent errors. Nesting is
 * bounded by PK_MAX_NESTING so no input can exhaust the stack, here or in later walks. */
#include <stdio.h>
#include <string.h>

#include "engine/lang/lang_internal.h"

typedef struct parser {
    pk_ctx *c;
    const pk_source *src;
    pk_token *toks;
    uint32_t n, pos;
    int depth;
    bool err; /* a syntax error in the current statement: unwind to the statement loop */
} parser;

static pk_token *tok(parser *p) { return &p->toks[p->pos]; }
static pk_token *peek(parser *p, uint32_t k) {
    uint32_t i = p->pos + k;
    return &p->toks[i < p->n ? i : p->n - 1];
}
static bool at(parser *p, int kind) { return tok(p)->kind == kind; }
static pk_token *advance(parser *p) {
    pk_token *t = tok(p);
    if (p->pos + 1 < p->n)
        p->pos++;
    return t;
}
static bool accept(parser *p, int kind) {
    if (!at(p, kind))
        return false;
    advance(p);
    return true;
}

static bool stop(parser *p) { return p->err || p->c->fatal; }

/* How a token reads in "found ..." messages. */
static const char *describe(parser *p, const pk_token *t) {
    if (t->kind == TK_EOF)
        return "end of file";
    pk_buf b = {0};
    uint32_t len = t->len > 24 ? 24 : t->len;
    pk_buf_printf(p->c, &b, "'%.*s%s'", (int)len, t->start, t->len > 24 ? "..." : "");
    return b.data;
}

static void syntax_error(parser *p, const pk_token *t, const char *what) {
    if (p->err)
        return;
    pk_error(p->c, t->loc, "expected %s, found %s", what, describe(p, t));
    p->err = true;
}

static bool expect(parser *p, int kind) {
    if (accept(p, kind))
        return true;
    char what[32];
    const char *text = pk_token_kind_text(kind);
    if (kind == TK_IDENT)
        snprintf(what, sizeof what, "a name");
    else
        snprintf(what, sizeof what, "'%s'", text);
    /* A ';' missing at the end of a line is reported there, just past the last token, as C
     * compilers do: the next line's first token is not where the fix goes. */
    const pk_token *prev = p->pos ? &p->toks[p->pos - 1] : NULL;
    const pk_token *t = tok(p);
    if (kind == TK_SEMI && !p->err && prev && t->kind != TK_EOF && prev->loc.file == t->loc.file &&
        prev->loc.line < t->loc.line && !memchr(prev->start, '\n', prev->len)) {
        pk_loc at = prev->loc;
        for (uint32_t i = 0; i < prev->len; i++)
            at.col += ((unsigned char)prev->start[i] & 0xC0) != 0x80; /* columns count characters */
        pk_error(p->c, at, "expected ';' at the end of the line, found %s on line %u",
                 describe(p, t), t->loc.line);
        p->err = true;
        return false;
    }
    syntax_error(p, t, what);
    return false;
}

static bool enter(parser *p) {
    if (++p->depth > PK_MAX_NESTING) {
        if (!p->c->fatal)
            pk_error(p->c, tok(p)->loc, "nesting is too deep (more than %d levels)", PK_MAX_NESTING);
        p->c->fatal = true;
        p->err = true;
        return false;
    }
    return true;
}
static void leave(parser *p) { p->depth--; }

/* ------------------------------------------------------------ nodes */

static pk_expr *new_expr(parser *p, int kind, pk_loc loc) {
    pk_expr *e = pk_alloc(p->c, sizeof *e);
    e->kind = (uint8_t)kind;
    e->loc = loc;
    e->start = loc;
    e->depth = 1;
    return e;
}

/* Depth of e from its children; a tree deeper than the limit stops the parse (left-deep
 * chains such as a+b+c+... are built by loops, not recursion, so this is where they stop). */
static void fix_depth(parser *p, pk_expr *e) {
    uint32_t d = 0;
    const pk_expr *kids[3] = {e->lhs, e->rhs, e->cond};
    for (int i = 0; i < 3; i++)
        if (kids[i] && kids[i]->depth > d)
            d = kids[i]->depth;
    for (uint32_t i = 0; i < e->nargs; i++)
        if (e->args[i] && e->args[i]->depth > d)
            d = e->args[i]->depth;
    e->depth = (uint16_t)(d + 1 > 65535 ? 65535 : d + 1);
    if (e->depth > PK_MAX_NESTING) {
        if (!p->c->fatal)
            pk_error(p->c, e->loc, "expression is nested too deeply (more than %d levels)",
                     PK_MAX_NESTING);
        p->c->fatal = true;
        p->err = true;
    }
}

static pk_stmt *new_stmt(parser *p, int kind, pk_loc loc) {
    pk_stmt *s = pk_alloc(p->c, sizeof *s);
    s->kind = (uint8_t)kind;
    s->loc = loc;
    return s;
}

static pk_var *new_var(parser *p, pk_token *name, pk_type t, int kind) {
    pk_var *v = pk_alloc(p->c, sizeof *v);
    v->name = name->name ? name->name->str : "?";
    v->loc = name->loc;
    v->type = t;
    v->kind = (uint8_t)kind;
    return v;
}

/* ------------------------------------------------------------ types */

static int type_keyword_kind(int tk) {
    switch (tk) {
    case TK_BOOL: return PK_T_BOOL;
    case TK_I32: case TK_INT_KW: return PK_T_I32;
    case TK_I64: return PK_T_I64;
    case TK_U32: return PK_T_U32;
    case TK_F32: case TK_FLOAT_KW: return PK_T_F32;
    case TK_F64: return PK_T_F64;
    case TK_VEC2: return PK_T_VEC2;
    case TK_VEC3: return PK_T_VEC3;
    case TK_VEC4: return PK_T_VEC4;
    case TK_IVEC2: return PK_T_IVEC2;
    case TK_IVEC3: return PK_T_IVEC3;
    case TK_MAT3: return PK_T_MAT3;
    default: return 0;
    }
}

static bool is_type_start(parser *p) {
    return type_keyword_kind(tok(p)->kind) != 0 || at(p, TK_FIELD);
}

static pk_type parse_type(parser *p) {
    pk_type t = {0, 0, 0};
    pk_token *tt = tok(p);
    int k = type_keyword_kind(tt->kind);
    if (k) {
        advance(p);
        return pk_type_make(k);
    }
    if (!at(p, TK_FIELD)) {
        syntax_error(p, tt, "a type");
        return t;
    }
    advance(p);
    if (!expect(p, TK_LT))
        return t;
    pk_token *et = tok(p);
    int ek = type_keyword_kind(et->kind);
    if (!ek) {
        if (at(p, TK_FIELD)) {
            pk_error(p->c, et->loc, "a field cannot hold fields");
            p->err = true;
        } else {
            syntax_error(p, et, "an element type");
        }
        return t;
    }
    advance(p);
    if (ek != PK_T_F32 && ek != PK_T_F64 && ek != PK_T_I32 && ek != PK_T_VEC2 && ek != PK_T_VEC3) {
        pk_error(p->c, et->loc, "field elements must be f32, f64, i32, vec2 or vec3, not '%s'",
                 pk_type_kind_name(ek));
        /* keep parsing: the declaration is still well-formed */
        ek = PK_T_ERROR;
    }
    int dim = 3;
    if (accept(p, TK_COMMA)) {
        pk_token *dt = tok(p);
        if (!at(p, TK_INT)) {
            syntax_error(p, dt, "a dimension (0, 1, 2 or 3)");
            return t;
        }
        advance(p);
        if (dt->ival > 3 || dt->suffix != PK_SUFFIX_NONE) {
            pk_error(p->c, dt->loc, "field dimension must be 0, 1, 2 or 3");
            ek = PK_T_ERROR;
        } else {
            dim = (int)dt->ival;
        }
    }
    if (at(p, TK_SHR)) {
        /* `field<f32>>` cannot be valid anyway, but say what is wrong */
        syntax_error(p, tok(p), "'>'");
        return t;
    }
    if (!expect(p, TK_GT))
        return t;
    if (ek == PK_T_ERROR)
        return pk_type_make(PK_T_ERROR);
    t.kind = PK_T_FIELD;
    t.elem = (uint8_t)ek;
    t.dim = (uint8_t)dim;
    return t;
}

/* ------------------------------------------------------------ expressions */

static pk_expr *parse_expr(parser *p);
static pk_expr *parse_unary(parser *p);

static void parse_args(parser *p, pk_expr *e, int close) {
    void **items = NULL;
    uint32_t n = 0, cap = 0;
    if (!at(p, close)) {
        for (;;) {
            pk_expr *a = parse_expr(p);
            if (stop(p))
                return;
            pk_vec_push(p->c, &items, &n, &cap, a);
            if (!accept(p, TK_COMMA))
                break;
        }
    }
    if (!expect(p, close))
        return;
    e->args = (pk_expr **)items;
    e->nargs = n;
}

static pk_expr *parse_primary(parser *p) {
    pk_token *t = tok(p);
    switch (t->kind) {
    case TK_INT: {
        advance(p);
        pk_expr *e = new_expr(p, PK_E_INT, t->loc);
        e->ival = (int64_t)t->ival;
        e->untyped = t->suffix == PK_SUFFIX_NONE;
        e->type = pk_type_make(t->suffix == PK_SUFFIX_U ? PK_T_U32
                               : t->suffix == PK_SUFFIX_L ? PK_T_I64 : PK_T_I32);
        /* keep the unsigned magnitude exactly for the range check */
        e->fval = (double)t->ival;
        if (t->ival > (uint64_t)INT64_MAX) {
            pk_error(p->c, t->loc, "integer literal '%.*s' is too large", (int)(t->len > 32 ? 32 : t->len), t->start);
            e->ival = 0;
        }
        return e;
    }
    case TK_FLOAT: {
        advance(p);
        pk_expr *e = new_expr(p, PK_E_FLOAT, t->loc);
        e->fval = t->fval;
        e->untyped = t->suffix == PK_SUFFIX_NONE;
        e->type = pk_type_make(PK_T_F32);
        return e;
    }
    case TK_TRUE:
    case TK_FALSE: {
        advance(p);
        pk_expr *e = new_expr(p, PK_E_BOOL, t->loc);
        e->ival = t->kind == TK_TRUE;
        e->type = pk_type_make(PK_T_BOOL);
        return e;
    }
    case TK_IDENT: {
        advance(p);
        if (at(p, TK_LPAREN)) {
            advance(p);
            pk_expr *e = new_expr(p, PK_E_CALL_NAME, t->loc);
            e->name = t->name->str;
            parse_args(p, e, TK_RPAREN);
            if (!stop(p))
                fix_depth(p, e);
            return e;
        }
        pk_expr *e = new_expr(p, PK_E_NAME, t->loc);
        e->name = t->name->str;
        return e;
    }
    case TK_LPAREN: {
        advance(p);
        pk_expr *e = parse_expr(p);
        if (stop(p))
            return NULL;
        expect(p, TK_RPAREN);
        return e;
    }
    default:
        break;
    }
    int k = type_keyword_kind(t->kind);
    if (k && peek(p, 1)->kind == TK_LPAREN) {
        advance(p);
        advance(p);
        pk_expr *e = new_expr(p, PK_E_CALL_NAME, t->loc);
        e->name = t->name->str;
        e->ctor_type = pk_type_make(k);
        parse_args(p, e, TK_RPAREN);
        if (!stop(p))
            fix_depth(p, e);
        return e;
    }
    syntax_error(p, t, "an expression");
    return NULL;
}

static pk_expr *parse_postfix(parser *p) {
    pk_expr *e = parse_primary(p);
    while (!stop(p)) {
        pk_token *t = tok(p);
        if (t->kind == TK_LBRACKET) {
            advance(p);
            pk_expr *ix = new_expr(p, PK_E_INDEX, t->loc);
            ix->start = e->start;
            ix->lhs = e;
            parse_args(p, ix, TK_RBRACKET);
            if (stop(p))
                return NULL;
            fix_depth(p, ix);
            e = ix;
        } else if (t->kind == TK_DOT) {
            advance(p);
            pk_token *m = tok(p);
            if (!expect(p, TK_IDENT))
                return NULL;
            pk_expr *me = new_expr(p, PK_E_MEMBER, m->loc);
            me->start = e->start;
            me->lhs = e;
            me->name = m->name->str;
            fix_depth(p, me);
            e = me;
        } else if (t->kind == TK_LPAREN) {
            pk_error(p->c, t->loc, "only functions can be called");
            p->err = true;
            return NULL;
        } else {
            break;
        }
    }
    return stop(p) ? NULL : e;
}

static pk_expr *parse_unary(parser *p) {
    pk_token *t = tok(p);
    int op = t->kind == TK_MINUS ? PK_OP_NEG : t->kind == TK_NOT ? PK_OP_NOT
           : t->kind == TK_TILDE ? PK_OP_BITNOT : t->kind == TK_PLUS ? -1 : 0;
    if (t->kind == TK_PLUSPLUS || t->kind == TK_MINUSMINUS) {
        pk_error(p->c, t->loc, "'%s' is not supported; write 'x %s= 1'",
                 pk_token_kind_text(t->kind), t->kind == TK_PLUSPLUS ? "+" : "-");
        p->err = true;
        return NULL;
    }
    if (!op)
        return parse_postfix(p);
    if (!enter(p))
        return NULL;
    advance(p);
    pk_expr *operand = parse_unary(p);
    leave(p);
    if (stop(p))
        return NULL;
    if (op < 0)
        return operand; /* unary plus */
    pk_expr *e = new_expr(p, PK_E_UNARY, t->loc);
    e->op = (uint8_t)op;
    e->lhs = operand;
    fix_depth(p, e);
    return e;
}

/* Binary precedence, lowest first (as in Rust: bitwise operators bind tighter than
 * comparisons, so `x & 1 == 0` means `(x & 1) == 0`). */
static int binary_prec(int tk, int *op) {
    switch (tk) {
    case TK_OROR: *op = PK_OP_OR; return 1;
    case TK_ANDAND: *op = PK_OP_AND; return 2;
    case TK_EQ: *op = PK_OP_EQ; return 3;
    case TK_NE: *op = PK_OP_NE; return 3;
    case TK_LT: *op = PK_OP_LT; return 3;
    case TK_LE: *op = PK_OP_LE; return 3;
    case TK_GT: *op = PK_OP_GT; return 3;
    case TK_GE: *op = PK_OP_GE; return 3;
    case TK_PIPE: *op = PK_OP_BITOR; return 4;
    case TK_CARET: *op = PK_OP_BITXOR; return 5;
    case TK_AMP: *op = PK_OP_BITAND; return 6;
    case TK_SHL: *op = PK_OP_SHL; return 7;
    case TK_SHR: *op = PK_OP_SHR; return 7;
    case TK_PLUS: *op = PK_OP_ADD; return 8;
    case TK_MINUS: *op = PK_OP_SUB; return 8;
    case TK_STAR: *op = PK_OP_MUL; return 9;
    case TK_SLASH: *op = PK_OP_DIV; return 9;
    case TK_PERCENT: *op = PK_OP_MOD; return 9;
    default: return 0;
    }
}

static pk_expr *parse_binary(parser *p, int min_prec) {
    pk_expr *lhs = parse_unary(p);
    while (!stop(p)) {
        int op = 0;
        int prec = binary_prec(tok(p)->kind, &op);
        if (!prec || prec < min_prec)
            break;
        pk_token *t = advance(p);
        if (!enter(p))
            return NULL;
        pk_expr *rhs = parse_binary(p, prec + 1);
        leave(p);
        if (stop(p))
            return NULL;
        pk_expr *e = new_expr(p, PK_E_BINARY, t->loc);
        e->start = lhs->start;
        e->op = (uint8_t)op;
        e->lhs = lhs;
        e->rhs = rhs;
        fix_depth(p, e);
        lhs = e;
    }
    return stop(p) ? NULL : lhs;
}

static pk_expr *parse_expr(parser *p) {
    if (!enter(p))
        return NULL;
    pk_expr *c = parse_binary(p, 1);
    if (!stop(p) && at(p, TK_QUESTION)) {
        pk_token *q = advance(p);
        pk_expr *a = parse_expr(p);
        if (!stop(p))
            expect(p, TK_COLON);
        pk_expr *b = stop(p) ? NULL : parse_expr(p);
        if (!stop(p)) {
            pk_expr *e = new_expr(p, PK_E_SELECT, q->loc);
            e->start = c->start;
            e->cond = c;
            e->lhs = a;
            e->rhs = b;
            fix_depth(p, e);
            c = e;
        }
    }
    leave(p);
    return stop(p) ? NULL : c;
}

/* ------------------------------------------------------------ statements */

static pk_stmt *parse_stmt(parser *p);

/* Skips the rest of a broken statement: up to and including the next ';' at this brace level,
 * or up to (not including) the '}' that closes the enclosing block. */
static void sync_stmt(parser *p, uint32_t start) {
    int depth = 0;
    while (!at(p, TK_EOF)) {
        int k = tok(p)->kind;
        if (k == TK_LBRACE) {
            depth++;
        } else if (k == TK_RBRACE) {
            if (depth == 0)
                break;
            if (--depth == 0) {
                advance(p);
                break;
            }
        } else if (k == TK_SEMI && depth == 0) {
            advance(p);
            break;
        }
        advance(p);
    }
    if (p->pos == start && !at(p, TK_EOF) && !at(p, TK_RBRACE))
        advance(p); /* always make progress */
}

static pk_stmt *parse_block(parser *p) {
    pk_token *open = tok(p);
    if (!expect(p, TK_LBRACE))
        return NULL;
    pk_stmt *b = new_stmt(p, PK_S_BLOCK, open->loc);
    void **items = NULL;
    uint32_t n = 0, cap = 0;
    while (!at(p, TK_RBRACE) && !at(p, TK_EOF) && !p->c->fatal) {
        uint32_t start = p->pos;
        pk_stmt *s = parse_stmt(p);
        if (p->err) {
            p->err = false;
            sync_stmt(p, start);
            continue;
        }
        if (s)
            pk_vec_push(p->c, &items, &n, &cap, s);
    }
    b->body = (pk_stmt **)items;
    b->nbody = n;
    if (p->c->fatal)
        return b;
    if (!at(p, TK_RBRACE)) {
        pk_error(p->c, tok(p)->loc, "expected '}' to close the block opened at line %u",
                 open->loc.line);
        p->err = true;
        return NULL;
    }
    advance(p);
    return b;
}

static pk_stmt *parse_decl(parser *p, bool is_const) {
    pk_token *first = tok(p);
    pk_type t = parse_type(p);
    if (stop(p))
        return NULL;
    pk_token *name = tok(p);
    if (!expect(p, TK_IDENT))
        return NULL;
    if (at(p, TK_SEMI)) {
        pk_error(p->c, name->loc, "variable '%s' needs an initializer", name->name->str);
        p->err = true;
        return NULL;
    }
    if (!expect(p, TK_ASSIGN))
        return NULL;
    pk_expr *init = parse_expr(p);
    if (stop(p) || !expect(p, TK_SEMI))
        return NULL;
    pk_stmt *s = new_stmt(p, PK_S_DECL, first->loc);
    s->var = new_var(p, name, t, PK_VAR_LOCAL);
    s->var->is_const = is_const;
    s->value = init;
    return s;
}

static bool is_assign_op(parser *p, int *op) {
    switch (tok(p)->kind) {
    case TK_ASSIGN: *op = PK_OP_NONE; return true;
    case TK_PLUS_ASSIGN: *op = PK_OP_ADD; return true;
    case TK_MINUS_ASSIGN: *op = PK_OP_SUB; return true;
    case TK_STAR_ASSIGN: *op = PK_OP_MUL; return true;
    case TK_SLASH_ASSIGN: *op = PK_OP_DIV; return true;
    case TK_IDENT: {
        /* `x min= y` and `x max= y`: the name followed directly by '=' */
        pk_token *t = tok(p), *n = peek(p, 1);
        if (n->kind != TK_ASSIGN || n->start != t->start + t->len)
            return false;
        if (strcmp(t->name->str, "min") == 0) { *op = PK_OP_MIN; return true; }
        if (strcmp(t->name->str, "max") == 0) { *op = PK_OP_MAX; return true; }
        return false;
    }
    default: return false;
    }
}

static pk_stmt *parse_for(parser *p) {
    pk_token *kw = advance(p);
    if (!expect(p, TK_LPAREN))
        return NULL;
    if (is_type_start(p)) {
        pk_error(p->c, tok(p)->loc,
                 "C-style for loops are not supported; write 'for (i in a .. b)'");
        /* skip the header to its ')' and check the body, so the errors that follow are real */
        int depth = 1;
        while (!at(p, TK_EOF) && !at(p, TK_LBRACE) && !at(p, TK_RBRACE)) {
            int k = advance(p)->kind;
            if (k == TK_LPAREN)
                depth++;
            else if (k == TK_RPAREN && --depth == 0)
                break;
        }
        if (depth == 0)
            parse_stmt(p);
        else
            p->err = true;
        return NULL;
    }
    bool is_static = accept(p, TK_STATIC);
    pk_token *name = tok(p);
    if (!expect(p, TK_IDENT) || !expect(p, TK_IN))
        return NULL;
    pk_expr *a = parse_expr(p);
    if (stop(p))
        return NULL;
    pk_expr *b = NULL;
    if (accept(p, TK_DOTDOT)) {
        b = parse_expr(p);
        if (stop(p))
            return NULL;
    } else if (is_static) {
        syntax_error(p, tok(p), "'..' (a static loop runs over a constant range)");
        return NULL;
    }
    if (!expect(p, TK_RPAREN))
        return NULL;
    pk_stmt *body = parse_stmt(p);
    if (stop(p))
        return NULL;
    pk_stmt *s;
    if (b) {
        s = new_stmt(p, is_static ? PK_S_FOR_STATIC : PK_S_FOR_RANGE, kw->loc);
        s->lo = a;
        s->hi = b;
    } else {
        s = new_stmt(p, PK_S_FOR_FIELD, kw->loc);
        s->target = a;
    }
    s->var = new_var(p, name, pk_type_make(PK_T_ERROR), PK_VAR_LOOP);
    s->var->is_const = 1;
    s->then = body;
    return s;
}

static pk_stmt *parse_stmt_inner(parser *p) {
    pk_token *t = tok(p);
    switch (t->kind) {
    case TK_LBRACE:
        return parse_block(p);
    case TK_SEMI:
        advance(p);
        return new_stmt(p, PK_S_BLOCK, t->loc);
    case TK_IF: {
        advance(p);
        if (!expect(p, TK_LPAREN))
            return NULL;
        pk_expr *cond = parse_expr(p);
        if (stop(p) || !expect(p, TK_RPAREN))
            return NULL;
        pk_stmt *then = parse_stmt(p);
        if (stop(p))
            return NULL;
        pk_stmt *els = NULL;
        if (accept(p, TK_ELSE)) {
            els = parse_stmt(p);
            if (stop(p))
                return NULL;
        }
        pk_stmt *s = new_stmt(p, PK_S_IF, t->loc);
        s->cond = cond;
        s->then = then;
        s->els = els;
        return s;
    }
    case TK_WHILE: {
        advance(p);
        if (!expect(p, TK_LPAREN))
            return NULL;
        pk_expr *cond = parse_expr(p);
        if (stop(p) || !expect(p, TK_RPAREN))
            return NULL;
        pk_stmt *body = parse_stmt(p);
        if (stop(p))
            return NULL;
        pk_stmt *s = new_stmt(p, PK_S_WHILE, t->loc);
        s->cond = cond;
        s->then = body;
        return s;
    }
    case TK_FOR:
        return parse_for(p);
    case TK_BREAK:
    case TK_CONTINUE:
        advance(p);
        if (!expect(p, TK_SEMI))
            return NULL;
        return new_stmt(p, t->kind == TK_BREAK ? PK_S_BREAK : PK_S_CONTINUE, t->loc);
    case TK_RETURN: {
        advance(p);
        pk_expr *v = NULL;
        if (!at(p, TK_SEMI)) {
            v = parse_expr(p);
            if (stop(p))
                return NULL;
        }
        if (!expect(p, TK_SEMI))
            return NULL;
        pk_stmt *s = new_stmt(p, PK_S_RETURN, t->loc);
        s->value = v;
        return s;
    }
    case TK_CONST:
        advance(p);
        return parse_decl(p, true);
    case TK_ELSE:
        pk_error(p->c, t->loc, "'else' without a matching 'if'");
        p->err = true;
        return NULL;
    case TK_KERNEL:
    case TK_FUNC:
        pk_error(p->c, t->loc, "%s declarations are only allowed at the top level",
                 t->kind == TK_KERNEL ? "kernel" : "function");
        p->err = true;
        return NULL;
    default:
        break;
    }
    if (is_type_start(p) && peek(p, 1)->kind != TK_LPAREN)
        return parse_decl(p, false);
    pk_expr *lhs = parse_expr(p);
    if (stop(p))
        return NULL;
    int op = 0;
    pk_token *opt = tok(p);
    if (is_assign_op(p, &op)) {
        advance(p);
        if (opt->kind == TK_IDENT)
            advance(p); /* the '=' of min= / max= */
        pk_expr *rhs = parse_expr(p);
        if (stop(p) || !expect(p, TK_SEMI))
            return NULL;
        pk_stmt *s = new_stmt(p, PK_S_ASSIGN, opt->loc);
        s->op = (uint8_t)op;
        s->lhs = lhs;
        s->value = rhs;
        return s;
    }
    if (at(p, TK_PLUSPLUS) || at(p, TK_MINUSMINUS)) {
        pk_error(p->c, opt->loc, "'%s' is not supported; write 'x %s= 1'",
                 pk_token_kind_text(opt->kind), opt->kind == TK_PLUSPLUS ? "+" : "-");
        p->err = true;
        return NULL;
    }
    if (!at(p, TK_SEMI)) {
        syntax_error(p, tok(p), "';'");
        return NULL;
    }
    advance(p);
    pk_stmt *s = new_stmt(p, PK_S_EXPR, lhs->loc);
    s->value = lhs;
    return s;
}

static pk_stmt *parse_stmt(parser *p) {
    if (!enter(p))
        return NULL;
    pk_stmt *s = parse_stmt_inner(p);
    leave(p);
    return s;
}

/* ------------------------------------------------------------ top level */

static void add_func(parser *p, pk_func *f) {
    pk_program *prog = p->c->prog;
    pk_vec_push(p->c, (void ***)&prog->funcs, &prog->nfuncs, &p->c->funcs_cap, f);
    if (f->is_kernel)
        pk_vec_push(p->c, (void ***)&prog->kernels, &prog->nkernels, &p->c->kernels_cap, f);
}

static void parse_function_rest(parser *p, pk_func *f, pk_token *name) {
    f->name = name->name->str;
    f->loc = name->loc;
    f->from_stdlib = (uint8_t)p->src->is_stdlib;
    if (!expect(p, TK_LPAREN))
        return;
    void **items = NULL;
    uint32_t n = 0, cap = 0;
    if (!at(p, TK_RPAREN)) {
        for (;;) {
            pk_type t = parse_type(p);
            if (stop(p))
                return;
            pk_token *pn = tok(p);
            if (!expect(p, TK_IDENT))
                return;
            if (n == PK_MAX_PARAMS) {
                pk_error(p->c, pn->loc, "too many parameters (at most %d)", PK_MAX_PARAMS);
            }
            pk_vec_push(p->c, &items, &n, &cap, new_var(p, pn, t, PK_VAR_PARAM));
            if (!accept(p, TK_COMMA))
                break;
        }
    }
    if (!expect(p, TK_RPAREN))
        return;
    f->params = (pk_var **)items;
    f->nparams = n;
    if (!at(p, TK_LBRACE)) {
        syntax_error(p, tok(p), "'{' to start the body");
        return;
    }
    f->body = parse_block(p);
    if (f->body && !p->err)
        add_func(p, f);
}

static void parse_top(parser *p) {
    pk_token *t = tok(p);
    pk_ctx *c = p->c;
    if (t->kind == TK_KERNEL) {
        advance(p);
        pk_token *name = tok(p);
        if (!expect(p, TK_IDENT))
            return;
        pk_func *f = pk_alloc(c, sizeof *f);
        f->is_kernel = 1;
        f->ret = pk_type_make(PK_T_VOID);
        parse_function_rest(p, f, name);
        return;
    }
    if (t->kind == TK_CONST) {
        advance(p);
        pk_type ty = parse_type(p);
        if (stop(p))
            return;
        pk_token *name = tok(p);
        if (!expect(p, TK_IDENT))
            return;
        if (!expect(p, TK_ASSIGN))
            return;
        pk_expr *init = parse_expr(p);
        if (stop(p) || !expect(p, TK_SEMI))
            return;
        pk_var *v = new_var(p, name, ty, PK_VAR_GLOBAL_CONST);
        v->is_const = 1;
        v->init = init;
        pk_program *prog = c->prog;
        pk_vec_push(c, (void ***)&prog->consts, &prog->nconsts, &c->consts_cap, v);
        return;
    }
    pk_type ret = pk_type_make(PK_T_VOID);
    bool func_kw = t->kind == TK_FUNC;
    if (func_kw)
        advance(p);
    if (func_kw && at(p, TK_IDENT) && peek(p, 1)->kind == TK_LPAREN) {
        /* `func name(...)`: no value */
    } else if (at(p, TK_VOID)) {
        advance(p);
    } else if (is_type_start(p)) {
        ret = parse_type(p);
        if (stop(p))
            return;
    } else {
        syntax_error(p, tok(p), func_kw ? "a return type or a name"
                                        : "a kernel, function or constant declaration");
        return;
    }
    pk_token *name = tok(p);
    if (!expect(p, TK_IDENT))
        return;
    if (!func_kw && (at(p, TK_ASSIGN) || at(p, TK_SEMI))) {
        pk_error(c, name->loc, "global variables are not supported; use 'const %s %s = ...;'",
                 pk_token_kind_text(t->kind), name->name->str);
        p->err = true;
        return;
    }
    pk_func *f = pk_alloc(c, sizeof *f);
    f->ret = ret;
    parse_function_rest(p, f, name);
}

/* Skips to the next top-level declaration keyword outside braces. */
static void sync_top(parser *p, uint32_t start) {
    int depth = 0;
    while (!at(p, TK_EOF)) {
        int k = tok(p)->kind;
        if (depth == 0 && p->pos != start && (k == TK_KERNEL || k == TK_FUNC || k == TK_CONST))
            break;
        if (k == TK_LBRACE)
            depth++;
        else if (k == TK_RBRACE && depth > 0)
            depth--;
        advance(p);
    }
}

void pk_parse(pk_ctx *c, const pk_source *src, pk_token *toks, uint32_t ntoks) {
    parser P = {0};
    parser *p = &P;
    p->c = c;
    p->src = src;
    p->toks = toks;
    p->n = ntoks;
    while (!at(p, TK_EOF) && !c->fatal) {
        uint32_t start = p->pos;
        parse_top(p);
        if (p->err) {
            p->err = false;
            sync_top(p, start);
        }
    }
}
