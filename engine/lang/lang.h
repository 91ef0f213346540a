/* lang.h — the entry of Plume's kernel-language front end: parse and check one source buffer
 * (together with the embedded standard library) into a typed AST (ast.h), or diagnostics.
 *
 * Threading: there is no global or static mutable state. Any number of threads may compile
 * different sources at the same time; one pk_result is used by one thread at a time, and a
 * successfully checked program is read-only (several threads may read it at once).
 *
 * Ownership: pk_compile() copies nothing from the caller after it returns: the file name and
 * source are copied into the result. The result owns the program, its AST and the diagnostics;
 * pk_result_free() releases all of it in one call. Pointers obtained from a result are valid
 * until it is freed.
 *
 * Failure: the front end never aborts, exits, crashes or recurses without bound on any input;
 * bad input gives diagnostics. pk_compile() returns NULL only when host memory runs out.
 */
#ifndef PLUME_LANG_H
#define PLUME_LANG_H

#include "engine/lang/ast.h"

typedef struct pk_options {
    int no_stdlib;  /* 1: do not parse the standard library with the source */
    int max_errors; /* stop after this many errors; 0: 20 */
    int no_warnings;/* 1: suppress warnings (unused variables) */
} pk_options;

typedef enum pk_severity { PK_SEV_ERROR = 0, PK_SEV_WARNING = 1, PK_SEV_NOTE = 2 } pk_severity;

typedef struct pk_diag {
    int severity;        /* pk_severity; a note refers to the error or warning before it */
    pk_loc loc;
    const char *message; /* without position or severity: "unknown name 'x'" */
} pk_diag;

typedef struct pk_result pk_result;

/* Limits the front end enforces with a diagnostic (docs/language.md, "Limits"). */
enum {
    PK_MAX_SOURCE_BYTES = 1024 * 1024,
    PK_MAX_NESTING = 256,      /* statement and expression nesting */
    PK_MAX_UNROLL = 4096,      /* product of the trip counts of nested static loops */
    PK_MAX_PARAMS = 64,
    PK_DEFAULT_MAX_ERRORS = 20
};

/* Parses and checks `len` bytes of `src` (need not be NUL-terminated) named `file` in
 * diagnostics (NULL: "<input>"). opt may be NULL for defaults. */
pk_result *pk_compile(const char *file, const char *src, size_t len, const pk_options *opt);

/* 1 when there were no errors: pk_result_program() is then the checked program. */
int pk_result_ok(const pk_result *r);
/* The checked program, or NULL when there were errors. */
const pk_program *pk_result_program(const pk_result *r);
/* Every diagnostic rendered for a terminal: "file:line:col: error: message\n", the source line,
 * a caret line; "" when there are none. */
const char *pk_result_text(const pk_result *r);
/* The errors alone, rendered the same way, each with its notes, and a last line counting the
 * warnings left out: what a failed compile reports, so that a bounded message (an ABI error
 * string is 4 KB) is not filled with warnings before the first error. */
const char *pk_result_error_text(const pk_result *r);
uint32_t pk_result_error_count(const pk_result *r);
uint32_t pk_result_diag_count(const pk_result *r);
const pk_diag *pk_result_diag(const pk_result *r, uint32_t i);
/* Line `line` of the source named `file` in this compile (the caller's source, which the result
 * keeps a copy of, or the standard library), then a line with a caret under column col, as
 * diagnostics show them: for messages about the program found after the compile (lowering).
 * Written into out (at most n bytes, NUL-terminated, without a final newline); 0, or -1 when
 * there is no such file or line (out is then ""). */
int pk_result_excerpt(const pk_result *r, const char *file, uint32_t line, uint32_t col,
                      char *out, size_t n);
void pk_result_free(pk_result *r);

/* A kernel's parameters as a node sees them: fields become ports, other parameters become
 * node parameters. `type` is the scalar/vector type kind of a non-field parameter, or the
 * element type of a field; `access` is pk_var.field_access (reads, writes, ...), which tells
 * input ports from output ports. Writes up to `cap` entries and returns the parameter count;
 * the strings belong to the program. */
typedef struct pk_port {
    const char *name;
    int is_field;
    int type;   /* pk_type_kind */
    int dim;    /* fields: 0..3 */
    uint32_t access;
} pk_port;
uint32_t pk_kernel_ports(const pk_func *kernel, pk_port *out, uint32_t cap);

/* The standard library's source (engine/lang/stdlib.pk), NUL-terminated, and its length. */
const char *pk_stdlib_source(size_t *len);

/* Printing (ast_print.c): the AST as S-expressions, one statement per line, the format
 * documented in docs/language.md ("AST dump"). Returns a malloc'd string the caller frees
 * with free(), or NULL when out of memory. */
enum { PK_PRINT_STDLIB = 1 /* include the standard library's declarations */ };
char *pk_print_program(const pk_program *prog, int flags);

#endif
