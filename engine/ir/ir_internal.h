/* Internals shared by engine/ir's files. */
#ifndef PLUME_IR_INTERNAL_H
#define PLUME_IR_INTERNAL_H

#include "engine/ir/ir.h"

#include <stdarg.h>
#include <stddef.h>

ir_arena *ir_arena_new(void);
void ir_arena_free(ir_arena *a);
void *ir_arena_alloc(ir_arena *a, size_t bytes);
size_t ir_arena_bytes(const ir_arena *a);

/* A growable text buffer; on allocation failure `failed` is set and appends are dropped. */
typedef struct ir_buf {
    char *s;
    size_t len, cap;
    int failed;
} ir_buf;
void ir_buf_printf(ir_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ir_buf_puts(ir_buf *b, const char *s);
/* The buffer's string (caller frees), or NULL on failure (buffer freed). */
char *ir_buf_finish(ir_buf *b);
/* Writes a float constant as the printer does ("2.0", "0.1", "1e+30", "inf", "nan"). */
void ir_buf_float(ir_buf *b, ir_type ty, double v);

#endif
