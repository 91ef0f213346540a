/* ast.h — the typed AST of Plume's kernel language: the contract between the front end
 * (lexer, parser, checker in engine/lang/) and the lowering to IR.
 *
 * Ownership: every node, string and array reachable from a pk_program lives in the program's
 * arena and is freed at once by pk_program_free() (lang.h). Nothing here owns anything else.
 * A checked program is immutable: several threads may walk the same program at once.
 *
 * After a successful pk_compile() (lang.h) the AST is fully resolved and typed:
 *  - every expression has a concrete `type` (never PK_T_ERROR, never an "untyped" literal);
 *  - no unresolved node kinds remain (PK_E_NAME, PK_E_INDEX, PK_E_MEMBER, PK_E_CALL_NAME are
 *    parser-only kinds);
 *  - every implicit conversion is an explicit PK_E_CAST (implicit flag set), every scalar that a
 *    binary operator broadcasts to a vector or matrix is an explicit PK_E_SPLAT, so both operands
 *    of PK_E_BINARY arithmetic have the result's type (except PK_OP_MATMUL, PK_OP_SHL/SHR and the
 *    comparisons, whose operands share one type and whose result is bool);
 *  - names point at their declaration (pk_var, pk_func).
 * docs/language.md is the reference for what each construct means.
 */
#ifndef PLUME_LANG_AST_H
#define PLUME_LANG_AST_H

#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- types */

typedef enum pk_type_kind {
    PK_T_ERROR = 0, /* only while checking, after an error */
    PK_T_VOID,      /* return type of functions without a value, and of some builtins */
    PK_T_BOOL,
    PK_T_I32,
    PK_T_I64,
    PK_T_U32,
    PK_T_F32,
    PK_T_F64,
    PK_T_VEC2, /* f32 components */
    PK_T_VEC3,
    PK_T_VEC4,
    PK_T_IVEC2, /* i32 components */
    PK_T_IVEC3,
    PK_T_MAT3, /* 3x3 f32, column-major */
    PK_T_FIELD, /* field<elem, dim>: only parameters and builtin/function arguments */
    PK_T_COUNT
} pk_type_kind;

/* A type is a small value. For PK_T_FIELD, `elem` is the element type (PK_T_F32, PK_T_F64,
 * PK_T_I32, PK_T_VEC2 or PK_T_VEC3) and `dim` is 0..3; both are 0 for other kinds. */
typedef struct pk_type {
    uint8_t kind; /* pk_type_kind */
    uint8_t elem; /* pk_type_kind of a field's element */
    uint8_t dim;  /* a field's dimension */
} pk_type;

/* ---------------------------------------------------------------- places */

/* A source position: file name as given to pk_compile (or "stdlib.pk"), 1-based line and
 * column (the column counts characters: a tab or a UTF-8 sequence is one). */
typedef struct pk_loc {
    const char *file;
    uint32_t line;
    uint32_t col;
} pk_loc;

/* ---------------------------------------------------------------- builtins */

/* Builtin functions. Argument and result types are settled by the checker (see
 * docs/language.md, "Builtins"): math builtins work component-wise on vectors, and their
 * arguments already have one common type (scalar arguments of min/max/clamp/lerp/pow against
 * a vector argument arrive as PK_E_SPLAT). */
typedef enum pk_builtin {
    PK_B_NONE = 0,
    /* one float argument (f32/f64 scalar or vec2/3/4), result of the same type */
    PK_B_SQRT, PK_B_EXP, PK_B_LOG, PK_B_SIN, PK_B_COS, PK_B_TAN,
    PK_B_FLOOR, PK_B_CEIL, PK_B_FRACT, PK_B_ROUND, PK_B_TRUNC,
    /* two float arguments of one type */
    PK_B_POW, PK_B_ATAN2,
    /* one numeric argument (signed int or float, scalar or vector), same type */
    PK_B_ABS, PK_B_SIGN,
    /* two/three numeric arguments of one type (scalar or vector), same type */
    PK_B_MIN, PK_B_MAX, PK_B_CLAMP,
    /* lerp(a, b, t): three float arguments of one type; a + (b - a) * t */
    PK_B_LERP,
    /* vectors */
    PK_B_DOT,       /* (vecN, vecN) -> f32; (ivecN, ivecN) -> i32 */
    PK_B_CROSS,     /* (vec3, vec3) -> vec3 */
    PK_B_LENGTH,    /* vecN -> f32 */
    PK_B_NORMALIZE, /* vecN -> vecN */
    /* matrices */
    PK_B_TRANSPOSE,   /* mat3 -> mat3 */
    PK_B_DETERMINANT, /* mat3 -> f32 */
    /* fields: argument 0 is a PK_E_FIELD_REF; argument 1 (if any) has the field's index type */
    PK_B_IS_ACTIVE,   /* (field, index) -> bool */
    PK_B_ACTIVATE,    /* (field, index) -> void */
    PK_B_DEACTIVATE,  /* (field, index) -> void */
    PK_B_VOXEL_SIZE,  /* (field) -> f32: edge length of a voxel in world units */
    PK_B_COUNT
} pk_builtin;

/* ---------------------------------------------------------------- operators */

typedef enum pk_op {
    PK_OP_NONE = 0,
    /* unary */
    PK_OP_NEG,    /* numeric scalar/vector/matrix */
    PK_OP_NOT,    /* bool */
    PK_OP_BITNOT, /* integer scalar */
    /* arithmetic: operands and result of one type (component-wise on vectors/matrices) */
    PK_OP_ADD, PK_OP_SUB, PK_OP_MUL, PK_OP_DIV,
    PK_OP_MOD, /* integers only; floored like PK_OP_DIV on signed integers */
    /* matrix products: mat3*mat3 -> mat3, mat3*vec3 -> vec3 */
    PK_OP_MATMUL,
    /* comparisons: scalar operands of one type, bool result */
    PK_OP_LT, PK_OP_LE, PK_OP_GT, PK_OP_GE, PK_OP_EQ, PK_OP_NE,
    /* logical, short-circuit: bool operands */
    PK_OP_AND, PK_OP_OR,
    /* bitwise and shifts: integer scalars of one type (shifting by the width or more is
     * undefined at run time) */
    PK_OP_BITAND, PK_OP_BITOR, PK_OP_BITXOR, PK_OP_SHL, PK_OP_SHR,
    /* compound-assignment only: x min= y, x max= y */
    PK_OP_MIN, PK_OP_MAX,
    PK_OP_COUNT
} pk_op;

/* ---------------------------------------------------------------- declarations */

typedef struct pk_expr pk_expr;
typedef struct pk_stmt pk_stmt;
typedef struct pk_func pk_func;

typedef enum pk_var_kind {
    PK_VAR_LOCAL = 1,   /* declared by a statement; `is_const` for `const T x = e;` */
    PK_VAR_PARAM,       /* parameter of a kernel or function (fields are parameters) */
    PK_VAR_LOOP,        /* loop variable of a range-, struct- or static for */
    PK_VAR_GLOBAL_CONST /* top-level `const`; `value` holds its evaluated value */
} pk_var_kind;

/* Bits of pk_var.field_access for field parameters: what the kernel or function does to the
 * field, including through the functions it calls. */
enum {
    PK_ACCESS_READ = 1,       /* f[i] read, is_active */
    PK_ACCESS_WRITE = 2,      /* f[i] = e (writes activate) */
    PK_ACCESS_ATOMIC = 4,     /* f[i] op= e inside a parallel loop */
    PK_ACCESS_ACTIVATE = 8,   /* activate(), or any write */
    PK_ACCESS_DEACTIVATE = 16,/* deactivate() */
    PK_ACCESS_ITERATE = 32    /* struct-for over its active cells */
};

/* A compile-time value: up to 9 components (mat3). Integer and bool types use `i`, float types
 * use `f`, component c of a vector at [c], mat3 column-major. */
typedef struct pk_value {
    pk_type type;
    int64_t i[9];
    double f[9];
} pk_value;

typedef struct pk_var {
    const char *name;
    pk_loc loc;
    pk_type type;
    uint8_t kind;     /* pk_var_kind */
    uint8_t is_const; /* cannot be assigned: const locals, loop variables, kernel parameters */
    uint32_t slot;    /* 0-based index unique among the variables of its function/kernel
                       * (parameters first, in order); unused for global constants */
    uint32_t uses;    /* number of references */
    uint32_t field_access; /* PK_ACCESS_* bits, for field parameters */
    pk_func *owner;   /* function or kernel; NULL for global constants */
    const pk_value *value; /* PK_VAR_GLOBAL_CONST, and const locals whose initializer is
                            * constant; NULL otherwise */
    pk_expr *init;    /* initializer of a global constant (locals keep it in their PK_S_DECL) */
    uint32_t region;  /* 0: declared in serial code; else the id (1, 2, ...) of the parallel
                       * loop whose body (or loop variable) declares it */
    uint8_t state;    /* checker-internal */
} pk_var;

/* ---------------------------------------------------------------- expressions */

typedef enum pk_expr_kind {
    PK_E_INT = 1,   /* `ival` in the type's range (u32 stored non-negative) */
    PK_E_FLOAT,     /* `fval`; type f32 or f64 */
    PK_E_BOOL,      /* `ival` 0 or 1 */
    PK_E_VAR,       /* `var`: local, parameter, loop variable or global constant (not a field) */
    PK_E_FIELD_REF, /* `var`: a field parameter passed whole to a builtin or a function;
                     * type is the field type; appears only as such an argument */
    PK_E_FIELD_ACCESS, /* `var`[`index`]: element of a field; index is NULL for a 0-D field,
                        * otherwise of type i32 / ivec2 / ivec3 for dim 1 / 2 / 3 */
    PK_E_UNARY,     /* `op` `lhs` */
    PK_E_BINARY,    /* `lhs` `op` `rhs` */
    PK_E_SELECT,    /* `cond` ? `lhs` : `rhs` (only the chosen side is evaluated) */
    PK_E_CALL,      /* `func`(`args`): call of a user or stdlib function (inlined later);
                     * field arguments are PK_E_FIELD_REF */
    PK_E_BUILTIN,   /* `builtin`(`args`) */
    PK_E_CAST,      /* convert `lhs` component-wise to `type` (same component count);
                     * `implicit` when the checker inserted it. float->int truncates. */
    PK_E_SPLAT,     /* every component of `type` (vector or mat3) is the scalar `lhs` */
    PK_E_CONSTRUCT, /* vector/matrix from `args`, whose components (already of the element
                     * type) are concatenated in order; for mat3 the 9 scalars or 3 vec3 are
                     * columns. Special case: mat3 with one scalar argument is the diagonal
                     * matrix. */
    PK_E_SWIZZLE,   /* components `swz[0..nswz)` (0=x,1=y,2=z,3=w) of vector `lhs`; nswz==1
                     * gives the scalar element type */
    PK_E_COMPONENT, /* `lhs`[`rhs`]: component of a vector (scalar result) or column of a
                     * mat3 (vec3 result); `rhs` is i32, checked in range when constant */
    /* parser-only kinds, never present after a successful check */
    PK_E_NAME,      /* `name` */
    PK_E_INDEX,     /* `lhs`[`args`] */
    PK_E_MEMBER,    /* `lhs`.`name` */
    PK_E_CALL_NAME  /* `name`(`args`), or a type constructor when `ctor_type.kind` != 0 */
} pk_expr_kind;

struct pk_expr {
    uint8_t kind;     /* pk_expr_kind */
    uint8_t op;       /* pk_op for UNARY/BINARY */
    uint8_t implicit; /* PK_E_CAST inserted by the checker */
    uint8_t nswz;
    uint8_t swz[4];
    uint16_t builtin; /* pk_builtin for PK_E_BUILTIN */
    uint16_t depth;   /* nesting depth of this subtree (bounded by the parser) */
    pk_type type;
    pk_loc loc;       /* the expression's own token: an operator, a '[', a name */
    pk_loc start;     /* where its text begins (its leftmost operand); line 0: same as loc */
    pk_expr *lhs, *rhs, *cond;
    pk_expr *index;   /* PK_E_FIELD_ACCESS */
    pk_expr **args;
    uint32_t nargs;
    pk_var *var;      /* PK_E_VAR, PK_E_FIELD_REF, PK_E_FIELD_ACCESS */
    pk_func *func;    /* PK_E_CALL */
    int64_t ival;
    double fval;
    const char *name;  /* as written: identifier, member name or callee */
    pk_type ctor_type; /* PK_E_CALL_NAME of a type keyword (parser) */
    uint8_t untyped;   /* checker-internal: literal whose type follows the context */
    uint8_t folded;    /* checker-internal: a literal made by folding an operation on literals */
};

/* ---------------------------------------------------------------- statements */

typedef enum pk_stmt_kind {
    PK_S_BLOCK = 1, /* `body[0..nbody)` in a new scope */
    PK_S_DECL,      /* `var` = `value` */
    PK_S_ASSIGN,    /* `lhs` `op`= `value`; op is PK_OP_NONE for plain `=`, else ADD, SUB,
                     * MUL, DIV, MIN, MAX (component-wise). lhs is a PK_E_VAR, a
                     * PK_E_FIELD_ACCESS, or a PK_E_SWIZZLE (distinct components) /
                     * PK_E_COMPONENT of one of those, nested. The value always has the lhs
                     * type (scalars are splatted). `atomic`: a compound assignment to a field
                     * element inside a parallel loop (or inside a function, which may be
                     * inlined into one; lowering may drop it where it inlines into serial
                     * code). */
    PK_S_EXPR,      /* `value` evaluated for its effect: a call */
    PK_S_IF,        /* if (`cond`) `then` else `els` (els may be NULL) */
    PK_S_WHILE,     /* while (`cond`) `then` */
    PK_S_FOR_RANGE, /* for (`var` in `lo` .. `hi`) `then`: half-open; integer scalars of one
                     * type (the var's), or ivec2/ivec3 bounds: the box lo <= var < hi,
                     * component-wise, order unspecified. `parallel` for outermost loops */
    PK_S_FOR_FIELD, /* for (`var` in `field`) `then`: active cells of field parameter
                     * `field` (dim 1..3); var has the index type; always parallel */
    PK_S_FOR_STATIC,/* for (static `var` in `first` .. `last`) `then`: unrolled at compile
                     * time for var = first .. last-1 (i32 constants) */
    PK_S_BREAK,     /* `loop`: the loop it leaves (never parallel, never static) */
    PK_S_CONTINUE,  /* `loop`: the loop it continues (never static) */
    PK_S_RETURN     /* `value` may be NULL (void functions); functions only */
} pk_stmt_kind;

struct pk_stmt {
    uint8_t kind;     /* pk_stmt_kind */
    uint8_t op;       /* PK_S_ASSIGN */
    uint8_t atomic;   /* PK_S_ASSIGN */
    uint8_t parallel; /* PK_S_FOR_RANGE, PK_S_FOR_FIELD */
    pk_loc loc;
    pk_stmt **body;   /* PK_S_BLOCK */
    uint32_t nbody;
    pk_var *var;      /* DECL, FOR_* */
    pk_var *field;    /* FOR_FIELD */
    pk_expr *lhs, *value, *cond, *lo, *hi;
    pk_stmt *then, *els;
    pk_stmt *loop;    /* BREAK, CONTINUE */
    int32_t first, last; /* FOR_STATIC */
    uint32_t region;  /* FOR_RANGE/FOR_FIELD with `parallel`: the loop's id (1, 2, ... per kernel) */
    /* parser-only */
    pk_expr *target;  /* FOR_FIELD before resolution: the expression after `in` */
};

/* ---------------------------------------------------------------- top level */

struct pk_func {
    const char *name;
    pk_loc loc;
    uint8_t is_kernel;
    uint8_t from_stdlib;
    pk_type ret;            /* PK_T_VOID for kernels and functions without a value */
    pk_var **params;
    uint32_t nparams;
    pk_stmt *body;          /* a PK_S_BLOCK */
    uint32_t nvars;         /* number of variable slots (params + locals + loop vars) */
    pk_func **callees;      /* distinct functions called directly */
    uint32_t ncallees;
    pk_func *next_overload; /* next function with the same name */
    uint32_t index;         /* position in pk_program.funcs */
    uint32_t nregions;      /* kernels: number of parallel loops */
};

typedef struct pk_arena pk_arena;

typedef struct pk_program {
    pk_func **funcs;   /* functions and kernels, stdlib first, then in source order */
    uint32_t nfuncs;
    pk_func **kernels; /* the kernels only, in source order */
    uint32_t nkernels;
    pk_var **consts;   /* global constants, stdlib first, then in source order */
    uint32_t nconsts;
    pk_arena *arena;   /* owns everything */
} pk_program;

/* ---------------------------------------------------------------- helpers (pure) */

/* Name of a type as written in the language: "f32", "vec3", "field<f32, 3>". Writes into buf
 * (always NUL-terminated) and returns buf. */
const char *pk_type_name(pk_type t, char *buf, size_t size);
/* Static name of a non-field type kind ("f32"), "field" for PK_T_FIELD. */
const char *pk_type_kind_name(int kind);
int pk_type_eq(pk_type a, pk_type b);
/* Number of scalar components: 1 for scalars, 2..4 for vectors, 9 for mat3, 0 otherwise. */
int pk_type_components(pk_type t);
/* Scalar type of a vector/matrix's components; the type itself for scalars. */
pk_type pk_type_scalar(pk_type t);
/* Index type of a field of dimension dim: i32, ivec2, ivec3; PK_T_VOID for dim 0. */
pk_type pk_field_index_type(int dim);
static inline pk_type pk_type_make(int kind) {
    pk_type t = {(uint8_t)kind, 0, 0};
    return t;
}

const char *pk_builtin_name(int builtin); /* "sqrt" */
const char *pk_op_name(int op);           /* "add", as the S-expression printer writes it */
const char *pk_op_symbol(int op);         /* "+" */

/* The kernel called `name`, or NULL. */
const pk_func *pk_find_kernel(const pk_program *prog, const char *name);

#endif
