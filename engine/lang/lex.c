/* lex.c — source text to tokens. Identifiers and keywords are interned; number literals are
 * converted here (floats with the "C" locale whatever the host application set). */
#define _GNU_SOURCE
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lang/lang_internal.h"

static const struct {
    const char *text;
    int kind;
} keywords[] = {
    {"kernel", TK_KERNEL}, {"func", TK_FUNC},     {"const", TK_CONST},       {"void", TK_VOID},
    {"return", TK_RETURN}, {"if", TK_IF},         {"else", TK_ELSE},         {"while", TK_WHILE},
    {"for", TK_FOR},       {"in", TK_IN},         {"static", TK_STATIC},     {"break", TK_BREAK},
    {"continue", TK_CONTINUE}, {"true", TK_TRUE}, {"false", TK_FALSE},       {"field", TK_FIELD},
    {"bool", TK_BOOL},     {"i32", TK_I32},       {"i64", TK_I64},           {"u32", TK_U32},
    {"f32", TK_F32},       {"f64", TK_F64},       {"vec2", TK_VEC2},         {"vec3", TK_VEC3},
    {"vec4", TK_VEC4},     {"ivec2", TK_IVEC2},   {"ivec3", TK_IVEC3},       {"mat3", TK_MAT3},
    {"int", TK_INT_KW},    {"float", TK_FLOAT_KW},
};

static const char *const punct_text[TK_COUNT] = {
    [TK_LPAREN] = "(", [TK_RPAREN] = ")", [TK_LBRACE] = "{", [TK_RBRACE] = "}",
    [TK_LBRACKET] = "[", [TK_RBRACKET] = "]", [TK_COMMA] = ",", [TK_SEMI] = ";",
    [TK_DOT] = ".", [TK_DOTDOT] = "..", [TK_QUESTION] = "?", [TK_COLON] = ":",
    [TK_PLUS] = "+", [TK_MINUS] = "-", [TK_STAR] = "*", [TK_SLASH] = "/", [TK_PERCENT] = "%",
    [TK_ASSIGN] = "=", [TK_PLUS_ASSIGN] = "+=", [TK_MINUS_ASSIGN] = "-=",
    [TK_STAR_ASSIGN] = "*=", [TK_SLASH_ASSIGN] = "/=", [TK_EQ] = "==", [TK_NE] = "!=",
    [TK_LT] = "<", [TK_LE] = "<=", [TK_GT] = ">", [TK_GE] = ">=", [TK_ANDAND] = "&&",
    [TK_OROR] = "||", [TK_NOT] = "!", [TK_TILDE] = "~", [TK_AMP] = "&", [TK_PIPE] = "|",
    [TK_CARET] = "^", [TK_SHL] = "<<", [TK_SHR] = ">>", [TK_PLUSPLUS] = "++",
    [TK_MINUSMINUS] = "--",
};

const char *pk_token_kind_text(int kind) {
    switch (kind) {
    case TK_EOF: return "end of file";
    case TK_IDENT: return "identifier";
    case TK_INT: return "integer literal";
    case TK_FLOAT: return "float literal";
    default: break;
    }
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (keywords[i].kind == kind)
            return keywords[i].text;
    if (kind > 0 && kind < TK_COUNT && punct_text[kind])
        return punct_text[kind];
    return "?";
}

void pk_register_keywords(pk_ctx *c) {
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        pk_intern(c, keywords[i].text, strlen(keywords[i].text))->keyword = keywords[i].kind;
    for (int b = 1; b < PK_B_COUNT; b++) {
        const char *n = pk_builtin_name(b);
        pk_intern(c, n, strlen(n))->builtin = b;
    }
}

typedef struct lexer {
    pk_ctx *c;
    const pk_source *src;
    const char *p, *end;
    /* incremental position: cursor `at` is at line/col */
    const char *at;
    uint32_t line, col;
    locale_t cloc;
    pk_token *toks;
    uint32_t n, cap;
} lexer;

static pk_loc locate(lexer *L, const char *pos) {
    while (L->at < pos) {
        unsigned char ch = (unsigned char)*L->at++;
        if (ch == '\n') {
            L->line++;
            L->col = 1;
        } else if ((ch & 0xC0) != 0x80) {
            L->col++;
        }
    }
    pk_loc loc = {L->src->name, L->line, L->col};
    return loc;
}

static pk_token *push(lexer *L, int kind, const char *start, const char *end) {
    if (L->n == L->cap) {
        uint32_t ncap = L->cap ? L->cap * 2 : 256;
        pk_token *t = pk_alloc(L->c, ncap * sizeof *t);
        if (L->n)
            memcpy(t, L->toks, L->n * sizeof *t);
        L->toks = t;
        L->cap = ncap;
    }
    pk_token *t = &L->toks[L->n++];
    memset(t, 0, sizeof *t);
    t->kind = (uint16_t)kind;
    t->loc = locate(L, start);
    t->start = start;
    t->len = (uint32_t)(end - start);
    return t;
}

static bool is_ident_start(int ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_'; }
static bool is_digit(int ch) { return ch >= '0' && ch <= '9'; }
static bool is_ident_char(int ch) { return is_ident_start(ch) || is_digit(ch); }
static bool is_hex(int ch) { return is_digit(ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F'); }

/* The code point of the UTF-8 sequence at s (*len bytes; U+FFFD and 1 byte when it is not
 * valid UTF-8: a stray or out-of-range lead byte, a cut sequence, an overlong form, a
 * surrogate). */
static uint32_t utf8_at(const char *s, const char *end, int *len) {
    const unsigned char *u = (const unsigned char *)s;
    int n = u[0] >= 0xF0 && u[0] < 0xF5 ? 4 : u[0] >= 0xE0 && u[0] < 0xF0 ? 3 : u[0] >= 0xC2 && u[0] < 0xE0 ? 2 : 0;
    uint32_t cp = n == 4 ? u[0] & 7u : n == 3 ? u[0] & 15u : u[0] & 31u;
    *len = 1;
    if (n == 0 || end - s < n)
        return 0xFFFD;
    for (int i = 1; i < n; i++) {
        if ((u[i] & 0xC0) != 0x80)
            return 0xFFFD;
        cp = cp << 6 | (u[i] & 63u);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0xFFFD;
    *len = n;
    return cp;
}

/* What a non-ASCII character that often slips into code from documents is, and what to type;
 * "" for others. */
static const char *char_hint(uint32_t cp) {
    switch (cp) {
    case 0x00A0: return " (a no-break space: type a plain space)";
    case 0x200B: return " (a zero-width space: delete it)";
    case 0xFEFF: return " (a byte-order mark: save the file as UTF-8 without one)";
    case 0x2212: return " (a minus sign: type '-')";
    case 0x2013: case 0x2014: return " (a dash: type '-')";
    case 0x00D7: return " (a multiplication sign: type '*')";
    case 0x2018: case 0x2019: case 0x201C: case 0x201D: return " (a typographic quote)";
    case 0xFFFD: return " (not valid UTF-8)";
    default: return "";
    }
}

/* A letter of another script, taken as part of a name in error; spaces, punctuation and
 * operators (U+2000..U+2BFF, U+3000..U+303F, the byte-order mark) end the name. */
static bool name_like(uint32_t cp) {
    return cp >= 0xC0 && cp != 0xD7 && cp != 0xF7 && !(cp >= 0x2000 && cp <= 0x2BFF) &&
           !(cp >= 0x3000 && cp <= 0x303F) && cp != 0xFEFF && cp != 0xFFFD;
}

/* How many bytes of the name s..q a message shows: at most 64, not splitting a character. */
static int name_cut(const char *s, const char *q) {
    int n = (int)(q - s > 64 ? 64 : q - s);
    while (n > 0 && n < q - s && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

/* "U+00E9 'é'" (the character itself only when it is printable UTF-8) */
static void char_text(const char *s, int len, uint32_t cp, char *out, size_t n) {
    if (cp == 0xFFFD || cp == 0xFEFF || cp == 0x200B || cp == 0x00A0)
        snprintf(out, n, "U+%04X", (unsigned)cp);
    else
        snprintf(out, n, "U+%04X '%.*s'", (unsigned)cp, len, s);
}

static void lex_number(lexer *L) {
    const char *s = L->p, *q = s, *e = L->end;
    bool is_float = false, bad = false, overflow = false;
    uint64_t v = 0;
    if (q + 1 < e && q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
        q += 2;
        const char *digits = q;
        while (q < e && is_hex((unsigned char)*q)) {
            int d = is_digit(*q) ? *q - '0' : (*q | 0x20) - 'a' + 10;
            if (v >> 60)
                overflow = true;
            v = v * 16 + (uint64_t)d;
            q++;
        }
        if (q == digits)
            bad = true;
    } else {
        while (q < e && is_digit((unsigned char)*q)) {
            uint64_t d = (uint64_t)(*q - '0');
            if (v > (UINT64_MAX - d) / 10)
                overflow = true;
            v = v * 10 + d;
            q++;
        }
        /* `1..n` is a range, not the float `1.` */
        if (q < e && *q == '.' && !(q + 1 < e && q[1] == '.')) {
            is_float = true;
            q++;
            while (q < e && is_digit((unsigned char)*q))
                q++;
        }
        if (q < e && (*q == 'e' || *q == 'E')) {
            const char *x = q + 1;
            if (x < e && (*x == '+' || *x == '-'))
                x++;
            if (x < e && is_digit((unsigned char)*x)) {
                is_float = true;
                q = x;
                while (q < e && is_digit((unsigned char)*q))
                    q++;
            } else {
                bad = true;
                q = x;
            }
        }
    }
    const char *num_end = q;
    int suffix = PK_SUFFIX_NONE;
    const char *sfx = q;
    while (q < e && is_ident_char((unsigned char)*q))
        q++;
    size_t sl = (size_t)(q - sfx);
    if (sl == 1 && (*sfx == 'u' || *sfx == 'U') && !is_float)
        suffix = PK_SUFFIX_U;
    else if (sl == 1 && (*sfx == 'l' || *sfx == 'L') && !is_float)
        suffix = PK_SUFFIX_L;
    else if (sl == 1 && (*sfx == 'f' || *sfx == 'F') && is_float)
        suffix = PK_SUFFIX_F;
    else if (sl > 0 && !bad) {
        pk_token *t = push(L, TK_INT, s, q);
        pk_error(L->c, t->loc, "invalid suffix '%.*s' on number", (int)(sl > 32 ? 32 : sl), sfx);
        L->p = q;
        return;
    }
    pk_token *t = push(L, is_float ? TK_FLOAT : TK_INT, s, q);
    t->suffix = (uint8_t)suffix;
    L->p = q;
    if (bad) {
        pk_error(L->c, t->loc, "malformed number '%.*s'", (int)(q - s > 32 ? 32 : q - s), s);
        return;
    }
    if (is_float) {
        char *tmp = pk_strndup(L->c, s, (size_t)(num_end - s));
        t->fval = L->cloc ? strtod_l(tmp, NULL, L->cloc) : strtod(tmp, NULL);
        if (isinf(t->fval))
            pk_error(L->c, t->loc, "float literal '%.*s' is too large (past f64's range)",
                     (int)(q - s > 32 ? 32 : q - s), s);
    } else if (overflow) {
        pk_error(L->c, t->loc, "integer literal '%.*s' is too large",
                 (int)(q - s > 32 ? 32 : q - s), s);
    } else {
        t->ival = v;
    }
}

static void lex_all(lexer *L) {
    pk_ctx *c = L->c;
    while (L->p < L->end && !c->fatal) {
        const char *s = L->p;
        unsigned char ch = (unsigned char)*s;
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v') {
            L->p++;
            continue;
        }
        if (ch == '/' && s + 1 < L->end && s[1] == '/') {
            const char *nl = memchr(s, '\n', (size_t)(L->end - s));
            L->p = nl ? nl : L->end;
            continue;
        }
        if (ch == '/' && s + 1 < L->end && s[1] == '*') {
            const char *q = s + 2;
            while (q + 1 < L->end && !(q[0] == '*' && q[1] == '/'))
                q++;
            if (q + 1 >= L->end) {
                pk_error(c, locate(L, s), "unterminated comment");
                L->p = L->end;
                break;
            }
            L->p = q + 2;
            continue;
        }
        if (is_ident_start(ch)) {
            const char *q = s, *bad = NULL;
            /* a name with a non-ASCII letter in it (dénsité) is one name in error, not several
             * tokens and a cascade of errors after them */
            while (q < L->end) {
                if (is_ident_char((unsigned char)*q)) {
                    q++;
                    continue;
                }
                int len;
                if ((unsigned char)*q < 0x80 || !name_like(utf8_at(q, L->end, &len)))
                    break;
                if (!bad)
                    bad = q;
                q += len;
            }
            if (bad) {
                int len;
                uint32_t cp = utf8_at(bad, L->end, &len);
                char what[48];
                char_text(bad, len, cp, what, sizeof what);
                pk_error(c, locate(L, bad), "non-ASCII character %s in the name '%.*s'%s: names are ASCII "
                         "letters, digits and '_'", what, name_cut(s, q), s, char_hint(cp));
            }
            pk_name *nm = pk_intern(c, s, (size_t)(q - s));
            pk_token *t = push(L, nm->keyword ? nm->keyword : TK_IDENT, s, q);
            t->name = nm;
            L->p = q;
            continue;
        }
        if (is_digit(ch) || (ch == '.' && s + 1 < L->end && is_digit((unsigned char)s[1]))) {
            lex_number(L);
            continue;
        }
        /* punctuation: longest match first */
        int best = 0;
        size_t best_len = 0;
        for (int k = TK_LPAREN; k < TK_COUNT; k++) {
            const char *pt = punct_text[k];
            if (!pt || pt[0] != (char)ch)
                continue;
            size_t pl = strlen(pt);
            if (pl > best_len && (size_t)(L->end - s) >= pl && memcmp(s, pt, pl) == 0) {
                best = k;
                best_len = pl;
            }
        }
        if (best) {
            push(L, best, s, s + best_len);
            L->p = s + best_len;
            continue;
        }
        if (ch >= 0x80) {
            int len;
            uint32_t cp = utf8_at(s, L->end, &len);
            if (name_like(cp)) { /* a name that starts with a letter of another script */
                const char *q = s + len;
                while (q < L->end) {
                    int l2;
                    if (is_ident_char((unsigned char)*q))
                        q++;
                    else if ((unsigned char)*q >= 0x80 && name_like(utf8_at(q, L->end, &l2)))
                        q += l2;
                    else
                        break;
                }
                char what[48];
                char_text(s, len, cp, what, sizeof what);
                pk_error(c, locate(L, s), "non-ASCII character %s in the name '%.*s': names are ASCII "
                         "letters, digits and '_'", what, name_cut(s, q), s);
                pk_name *nm = pk_intern(c, s, (size_t)(q - s));
                pk_token *t = push(L, TK_IDENT, s, q);
                t->name = nm;
                L->p = q;
                continue;
            }
            char what[48];
            char_text(s, len, cp, what, sizeof what);
            pk_error(c, locate(L, s), "non-ASCII character %s outside a comment%s", what, char_hint(cp));
            /* read on as what was meant, so one slip gives one error; a run of other
             * non-ASCII characters is one error */
            const char *q = s + len;
            if (cp == 0x2212 || cp == 0x2013 || cp == 0x2014)
                push(L, TK_MINUS, s, q);
            else if (cp == 0x00D7)
                push(L, TK_STAR, s, q);
            else
                while (q < L->end && (unsigned char)*q >= 0x80)
                    q++;
            L->p = q;
            continue;
        }
        if (ch >= 0x21 && ch < 0x7f)
            pk_error(c, locate(L, s), "unexpected character '%c'", ch);
        else
            pk_error(c, locate(L, s), "unexpected byte 0x%02X", ch);
        L->p++;
    }
    push(L, TK_EOF, L->end, L->end);
}

pk_token *pk_lex(pk_ctx *c, const pk_source *src, uint32_t *ntokens) {
    lexer L = {0};
    L.c = c;
    L.src = src;
    L.p = L.at = src->text;
    L.end = src->text + src->len;
    L.line = 1;
    L.col = 1;
    L.cloc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    /* pk_alloc may longjmp out of lex_all; the locale must not leak then, so lexing runs with
     * a private jump point that frees it and passes the jump on. */
    jmp_buf saved;
    memcpy(saved, c->oom, sizeof saved);
    if (setjmp(c->oom)) {
        if (L.cloc)
            freelocale(L.cloc);
        memcpy(c->oom, saved, sizeof saved);
        longjmp(c->oom, 1);
    }
    lex_all(&L);
    memcpy(c->oom, saved, sizeof saved);
    if (L.cloc)
        freelocale(L.cloc);
    *ntokens = L.n;
    return L.toks;
}
