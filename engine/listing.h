/* listing.h — what `plume compile --emit ir|llvm|asm|ptx` prints: a kernel's code at each stage
 * of the compiler, without a context or fields.
 *
 * Fields have no layout in a source file, so each field parameter is given the default layout
 * of its dimension (eng_default_layout, engine.h): the listing shows the code a scene's default fields
 * get. IR listings show the kernel as lowered, after each scalar-optimizer pass, each task as
 * offloaded (with its metadata), and each task as the code generator receives it. LLVM and
 * assembly listings show each task's optimized module (the sparse runtime linked in and
 * internalized); PTX listings are for sm_80.
 *
 * Threads: no shared state; any thread. Ownership: *text is malloc'd (free()). Errors: -1 with
 * the message in err (source errors as rendered diagnostics: file:line:col, line, caret). */
#ifndef PLUME_ENGINE_LISTING_H
#define PLUME_ENGINE_LISTING_H

#include <stddef.h>
#include <stdio.h>

#include "engine/ir/ir.h"

typedef enum eng_listing_kind {
    ENG_LIST_IR = 0,
    ENG_LIST_LLVM = 1,
    ENG_LIST_ASM = 2,
    ENG_LIST_PTX = 3,
    ENG_LIST_PTX_LLVM = 4 /* the NVPTX module's LLVM IR */
} eng_listing_kind;

/* Error kinds for the caller to map onto its own status codes. */
enum { ENG_LIST_OK = 0, ENG_LIST_ESOURCE = 1, ENG_LIST_ENOTFOUND = 2, ENG_LIST_EFAIL = 3 };

/* kernel NULL or "": every kernel of the file. Returns ENG_LIST_*. */
int eng_compile_listing(const char *file, const char *src, size_t len, const char *kernel,
                        int kind, char **text, char *err, size_t n);

/* One codegen-ready task (as a context lowers it) written to f as LLVM IR, host assembly or
 * PTX (kind ENG_LIST_LLVM, _ASM, _PTX, _PTX_LLVM): what PLUME_IR_DUMP adds for a task whose
 * fields have the layouts a scene gave them. 0, or -1 with a message. */
int eng_task_listing(FILE *f, ir_task *low, int kind, char *err, size_t n);

/* The IR descriptor of a field of dimension dim (0..3) holding f32 (vec3 = 0) or vec3
 * (vec3 = 1) in its dimension's default layout (eng_default_layout): what a listing gives a
 * field parameter. 0, or -1 with a message for a bad dim. */
int eng_default_field_info(int dim, int vec3, ir_field_info *out, char *err, size_t n);

#endif
