/* Internals of kernels, launches and the executor (kernel.h); shared by program.c, launch.c,
 * exec.c and engine.c only. */
#ifndef PLUME_ENGINE_KERNEL_INTERNAL_H
#define PLUME_ENGINE_KERNEL_INTERNAL_H

#include "engine/ir/ir.h"
#include "engine/kernel.h"
#include "engine/lang/lang.h"

#define ENG_MAX_PARAMS 64

/* A kernel lowered and offloaded for one set of field descriptors (fields with the same layout
 * and type share it), plus the SFG handles of its tasks for each binding of fields seen. */
typedef struct eng_binding {
    uint32_t field_id[ENG_MAX_PARAMS]; /* per field slot */
    uint32_t ntasks;
    struct sfg_ir *irs;                /* interned bound tasks, one per task */
} eng_binding;

typedef struct eng_spec {
    ir_field_info *fields;   /* per field slot */
    uint32_t nfields;
    ir_task **tasks;         /* offloaded, with metadata; owned */
    uint32_t ntasks;
    uint32_t nargs;          /* scalar arguments after scalarization, gtmp address included */
    const ir_type *arg_types;/* per argument (tasks[0]'s: every task of a kernel has the same) */
    uint32_t gtmp_arg;       /* argument carrying the gtmp buffer's address; UINT32_MAX: none */
    void *gtmp;              /* the kernel's global temporaries (one buffer: launches of this
                              * spec are ordered by its SFG state) */
    struct eng_cuda *gtmp_cuda; /* the GPU whose managed memory holds gtmp, or NULL */
    uint32_t gtmp_state;     /* SFG value-state id of that buffer */
    eng_binding *bindings;
    uint32_t nbindings;
} eng_spec;

struct eng_kernel {
    eng_context *ctx;
    eng_program *program;
    const pk_func *fn;
    uint32_t nparams;
    eng_param params[ENG_MAX_PARAMS];
    eng_spec *specs;
    uint32_t nspecs;
};

struct eng_program {
    pk_result *result;
    const pk_program *prog;
    eng_kernel *kernels;
    uint32_t nkernels;
    char *origin; /* eng_program_set_origin's; its address tags the tasks of p's kernels */
};

void eng_kernel_release(eng_kernel *k);
void eng_programs_free(eng_context *ctx);
/* -1 with a file:line:col message in err when a task of fn's is too large for the code
 * generator to compile in reasonable time (launch.c: MAX_TASK_STMTS); 0 otherwise. */
int eng_tasks_size_check(const pk_func *fn, ir_task *const *tasks, uint32_t nt, char *err, size_t n);
/* -1 with a file:line:col message when v is a field parameter of an element type no node's
 * field holds (f32 and vec3 only: field<i32> would get no port); 0 otherwise. */
int eng_field_param_check(const pk_var *v, char *err, size_t n);
/* msg, an error lowering fn gave, as "file:line:col: error: kernel 'k': ..." in out: a message
 * that starts with its place keeps it and gets the kernel's name after "error: " unless it
 * names it already; one without a place gets the kernel's own (editors jump to the place at
 * the start of a line). With r (the compile's result), the source line and a caret under the
 * place follow, as the front end's errors show them. */
void eng_error_in_kernel(const char *msg, const pk_func *fn, const pk_result *r, char *out,
                         size_t n);
/* Frees the retired programs: nothing queued or running can use them any more. */
void eng_programs_free_retired(eng_context *ctx);

#endif
