/* lang_internal.h — shared state of one compilation inside engine/lang/ (never included from
 * outside the folder). One pk_ctx per pk_compile() call; it lives on that thread only.
 *
 * Memory: everything is allocated from ctx->arena. When host memory runs out, pk_alloc()
 * longjmps to ctx->oom, set by pk_compile(), which frees the arena and returns NULL.
 */
#ifndef PLUME_LANG_INTERNAL_H
#define PLUME_LANG_INTERNAL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>

#include "engine/lang/lang.h"

/* ------------------------------------------------------------ arena (arena.c) */

pk_arena *pk_arena_new(void);
void pk_arena_free(pk_arena *a);
/* NULL when out of memory (callers inside a compile use pk_alloc). */
void *pk_arena_alloc(pk_arena *a, size_t size);

/* ------------------------------------------------------------ growable buffers */

typedef struct pk_buf {
    char *data;
    size_t len, cap;
} pk_buf;

/* ------------------------------------------------------------ names */

/* Interned identifier: equal names are the same pointer. `bind_*` are the checker's current
 * bindings, restored when scopes close (no shadowing is allowed, so one slot suffices). */
typedef struct pk_name {
    const char *str;
    uint32_t len;
    uint32_t hash;
    struct pk_name *next;
    pk_var *local;         /* local variable or parameter in scope */
    pk_var *global_const;  /* top-level constant */
    pk_func *funcs;        /* top-level functions/kernels with this name (overloads) */
    int keyword;           /* token kind when the name is a keyword, else 0 */
    int builtin;           /* pk_builtin when the name is a builtin function, else 0 */
} pk_name;

/* ------------------------------------------------------------ sources and tokens */

typedef struct pk_source {
    const char *name;
    const char *text;
    size_t len;
    int is_stdlib;
} pk_source;

enum {
    TK_EOF = 1,
    TK_IDENT,
    TK_INT,
    TK_FLOAT,
    /* keywords */
    TK_KERNEL, TK_FUNC, TK_CONST, TK_VOID, TK_RETURN, TK_IF, TK_ELSE, TK_WHILE, TK_FOR, TK_IN,
    TK_STATIC, TK_BREAK, TK_CONTINUE, TK_TRUE, TK_FALSE, TK_FIELD,
    TK_BOOL, TK_I32, TK_I64, TK_U32, TK_F32, TK_F64, TK_VEC2, TK_VEC3, TK_VEC4, TK_IVEC2,
    TK_IVEC3, TK_MAT3, TK_INT_KW, TK_FLOAT_KW,
    /* punctuation */
    TK_LPAREN, TK_RPAREN, TK_LBRACE, TK_RBRACE, TK_LBRACKET, TK_RBRACKET, TK_COMMA, TK_SEMI,
    TK_DOT, TK_DOTDOT, TK_QUESTION, TK_COLON, TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_PERCENT,
    TK_ASSIGN, TK_PLUS_ASSIGN, TK_MINUS_ASSIGN, TK_STAR_ASSIGN, TK_SLASH_ASSIGN, TK_EQ, TK_NE,
    TK_LT, TK_LE, TK_GT, TK_GE, TK_ANDAND, TK_OROR, TK_NOT, TK_TILDE, TK_AMP, TK_PIPE, TK_CARET,
    TK_SHL, TK_SHR, TK_PLUSPLUS, TK_MINUSMINUS,
    TK_COUNT
};

/* Literal suffixes */
enum { PK_SUFFIX_NONE = 0, PK_SUFFIX_U, PK_SUFFIX_L, PK_SUFFIX_F, PK_SUFFIX_D };

typedef struct pk_token {
    uint16_t kind;
    uint8_t suffix;
    pk_loc loc;
    const char *start; /* in the source text */
    uint32_t len;
    pk_name *name;     /* TK_IDENT and keywords */
    uint64_t ival;     /* TK_INT */
    double fval;       /* TK_FLOAT */
} pk_token;

/* ------------------------------------------------------------ the compilation */

typedef struct pk_ctx {
    pk_arena *arena;
    jmp_buf oom;
    const pk_options *opt;
    int max_errors;

    pk_source sources[2];
    int nsources;

    /* diagnostics */
    pk_diag *diags;
    uint32_t ndiags, cap_diags;
    uint32_t nerrors;
    bool fatal;      /* stop: too many errors or nesting limit */
    bool note_ok;    /* the last error/warning was kept, so a note may follow it */

    /* interned names: open hash */
    pk_name **names;
    uint32_t names_cap, names_count;

    pk_program *prog;
    uint32_t funcs_cap, kernels_cap, consts_cap;
    const char *stdlib_file; /* "stdlib.pk" */
} pk_ctx;

void *pk_alloc(pk_ctx *c, size_t size); /* zeroed; never NULL (longjmps on OOM) */
char *pk_strndup(pk_ctx *c, const char *s, size_t n);
/* Appends to a growable array of pointers kept in the arena. */
void pk_vec_push(pk_ctx *c, void ***items, uint32_t *n, uint32_t *cap, void *item);

void pk_buf_putn(pk_ctx *c, pk_buf *b, const char *s, size_t n);
/* diag.c: line `line` of text (control characters as spaces), a newline, then spaces and tabs
 * up to column col (UTF-8 sequences are one column) and a caret; nothing when the text has
 * no such line. */
typedef void (*pk_put_fn)(void *ud, const char *s, size_t n);
void pk_excerpt(const char *text, size_t len, uint32_t line, uint32_t col, pk_put_fn put,
                void *ud);
void pk_buf_puts(pk_ctx *c, pk_buf *b, const char *s);
void pk_buf_printf(pk_ctx *c, pk_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

pk_name *pk_intern(pk_ctx *c, const char *s, size_t n);

/* diag.c: messages are printf-formatted. Errors past the cap set ctx->fatal. */
void pk_error(pk_ctx *c, pk_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void pk_warning(pk_ctx *c, pk_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void pk_note(pk_ctx *c, pk_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Renders every diagnostic, or (errors_only) the errors and their notes with a count of the
 * warnings left out, into a NUL-terminated arena string. */
const char *pk_render_diags(pk_ctx *c, int errors_only);

/* lex.c: tokenizes a whole source; the array ends with TK_EOF. */
pk_token *pk_lex(pk_ctx *c, const pk_source *src, uint32_t *ntokens);
const char *pk_token_kind_text(int kind); /* "'('", "identifier", "end of file" */
void pk_register_keywords(pk_ctx *c);

/* parse.c: appends declarations to the program (not yet checked). */
void pk_parse(pk_ctx *c, const pk_source *src, pk_token *toks, uint32_t ntoks);

/* check*.c */
void pk_check_program(pk_ctx *c);

/* builtins.c */
int pk_builtin_lookup(const char *name);

/* consteval.c: evaluates a checked expression built from literals, global constants,
 * operators, casts, constructors, swizzles and pure math builtins. Returns 1 and fills *out,
 * or 0 when the expression is not constant. *why (may be NULL) explains a failure that is an
 * error even in a constant (division by zero). */
int pk_const_eval(pk_ctx *c, const pk_expr *e, pk_value *out, const char **why);

/* stdlib_pk.c, generated at build time from stdlib.pk by embed.cmake */
extern const unsigned char pk_stdlib_bytes[];
extern const size_t pk_stdlib_size;

/* verify.c: 1 when the checked program meets the contract in ast.h, else 0 and a message */
int pk_verify(const pk_program *prog, char *msg, size_t size);

/* Type helpers shared by the checker */
static inline bool pk_is_int_kind(int k) { return k == PK_T_I32 || k == PK_T_I64 || k == PK_T_U32; }
static inline bool pk_is_float_kind(int k) { return k == PK_T_F32 || k == PK_T_F64; }
static inline bool pk_is_scalar_kind(int k) { return k >= PK_T_BOOL && k <= PK_T_F64; }
static inline bool pk_is_numeric_kind(int k) { return k >= PK_T_I32 && k <= PK_T_F64; }
static inline bool pk_is_vector_kind(int k) { return k >= PK_T_VEC2 && k <= PK_T_IVEC3; }

#endif
