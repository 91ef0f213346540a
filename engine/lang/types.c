/* types.c — names and small queries on types, operators and builtins (ast.h helpers). */
#include <stdio.h>
#include <string.h>

#include "engine/lang/lang_internal.h"

static const char *const type_names[PK_T_COUNT] = {
    [PK_T_ERROR] = "<error>", [PK_T_VOID] = "void",   [PK_T_BOOL] = "bool",
    [PK_T_I32] = "i32",       [PK_T_I64] = "i64",     [PK_T_U32] = "u32",
    [PK_T_F32] = "f32",       [PK_T_F64] = "f64",     [PK_T_VEC2] = "vec2",
    [PK_T_VEC3] = "vec3",     [PK_T_VEC4] = "vec4",   [PK_T_IVEC2] = "ivec2",
    [PK_T_IVEC3] = "ivec3",   [PK_T_MAT3] = "mat3",   [PK_T_FIELD] = "field",
};

const char *pk_type_kind_name(int kind) {
    return kind >= 0 && kind < PK_T_COUNT ? type_names[kind] : "?";
}

const char *pk_type_name(pk_type t, char *buf, size_t size) {
    if (t.kind == PK_T_FIELD)
        snprintf(buf, size, "field<%s, %d>", pk_type_kind_name(t.elem), t.dim);
    else
        snprintf(buf, size, "%s", pk_type_kind_name(t.kind));
    return buf;
}

int pk_type_eq(pk_type a, pk_type b) {
    return a.kind == b.kind && a.elem == b.elem && a.dim == b.dim;
}

int pk_type_components(pk_type t) {
    switch (t.kind) {
    case PK_T_BOOL: case PK_T_I32: case PK_T_I64: case PK_T_U32: case PK_T_F32: case PK_T_F64:
        return 1;
    case PK_T_VEC2: case PK_T_IVEC2: return 2;
    case PK_T_VEC3: case PK_T_IVEC3: return 3;
    case PK_T_VEC4: return 4;
    case PK_T_MAT3: return 9;
    default: return 0;
    }
}

pk_type pk_type_scalar(pk_type t) {
    switch (t.kind) {
    case PK_T_VEC2: case PK_T_VEC3: case PK_T_VEC4: case PK_T_MAT3: return pk_type_make(PK_T_F32);
    case PK_T_IVEC2: case PK_T_IVEC3: return pk_type_make(PK_T_I32);
    default: return t;
    }
}

pk_type pk_field_index_type(int dim) {
    switch (dim) {
    case 1: return pk_type_make(PK_T_I32);
    case 2: return pk_type_make(PK_T_IVEC2);
    case 3: return pk_type_make(PK_T_IVEC3);
    default: return pk_type_make(PK_T_VOID);
    }
}

static const struct {
    const char *name, *symbol;
} ops[PK_OP_COUNT] = {
    [PK_OP_NONE] = {"none", "="},   [PK_OP_NEG] = {"neg", "-"},     [PK_OP_NOT] = {"not", "!"},
    [PK_OP_BITNOT] = {"bitnot", "~"}, [PK_OP_ADD] = {"add", "+"},   [PK_OP_SUB] = {"sub", "-"},
    [PK_OP_MUL] = {"mul", "*"},     [PK_OP_DIV] = {"div", "/"},     [PK_OP_MOD] = {"mod", "%"},
    [PK_OP_MATMUL] = {"matmul", "*"}, [PK_OP_LT] = {"lt", "<"},    [PK_OP_LE] = {"le", "<="},
    [PK_OP_GT] = {"gt", ">"},       [PK_OP_GE] = {"ge", ">="},     [PK_OP_EQ] = {"eq", "=="},
    [PK_OP_NE] = {"ne", "!="},      [PK_OP_AND] = {"and", "&&"},   [PK_OP_OR] = {"or", "||"},
    [PK_OP_BITAND] = {"bitand", "&"}, [PK_OP_BITOR] = {"bitor", "|"},
    [PK_OP_BITXOR] = {"bitxor", "^"}, [PK_OP_SHL] = {"shl", "<<"}, [PK_OP_SHR] = {"shr", ">>"},
    [PK_OP_MIN] = {"min", "min"},   [PK_OP_MAX] = {"max", "max"},
};

const char *pk_op_name(int op) { return op >= 0 && op < PK_OP_COUNT ? ops[op].name : "?"; }
const char *pk_op_symbol(int op) { return op >= 0 && op < PK_OP_COUNT ? ops[op].symbol : "?"; }

const pk_func *pk_find_kernel(const pk_program *prog, const char *name) {
    if (!prog || !name)
        return NULL;
    for (uint32_t i = 0; i < prog->nkernels; i++)
        if (strcmp(prog->kernels[i]->name, name) == 0)
            return prog->kernels[i];
    return NULL;
}
