/* The fast copy of a struct_for (placeholder until the block-local path lands). */
#define _GNU_SOURCE
#include "engine/codegen/cg_internal.h"

LLVMValueRef cg_fast_struct_check(cg_fn *f, cg_fast *fast)
{
    (void)f;
    (void)fast;
    return NULL;
}

int cg_fast_struct_entry(cg_fn *f, LLVMValueRef coord[IR_MAX_DIM], LLVMValueRef container)
{
    (void)f;
    (void)coord;
    (void)container;
    return 0;
}

void cg_fast_struct_cell(cg_fn *f, LLVMValueRef cell)
{
    (void)f;
    (void)cell;
}

LLVMValueRef cg_fast_struct_ptr(cg_fn *f, const cg_access *a)
{
    (void)a;
    cg_fail(f, "struct_for fast path not available");
    return NULL;
}
