/* Values: constants, unary and binary operators, casts, with the semantics ir.h defines (floored
 * integer division with x/0 = 0, shift counts modulo the width, NaN-ignoring float min/max,
 * saturating float->int casts) and math through intrinsics, libm (CPU) or libdevice (NVPTX). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "engine/codegen/cg_internal.h"

LLVMValueRef cg_emit_const(cg_fn *f, const ir_stmt *s)
{
    if (s->ty == IR_BOOL)
        return LLVMConstInt(f->t_i1, s->ival != 0, 0);
    if (ir_type_is_int(s->ty))
        return LLVMConstInt(cg_type(f, s->ty), (unsigned long long)s->ival, 1);
    if (ir_type_is_float(s->ty))
        return LLVMConstReal(cg_type(f, s->ty), s->fval);
    cg_fail(f, "constant of type %s", ir_type_name(s->ty));
    return NULL;
}

static const char *scalar_suffix(cg_fn *f, LLVMTypeRef ty)
{
    if (ty == f->t_f32)
        return "f32";
    if (ty == f->t_f64)
        return "f64";
    if (ty == f->t_i64)
        return "i64";
    if (ty == f->t_i1)
        return "i1";
    return "i32";
}

/* The overload suffix of an intrinsic on ty: "f32", or "v4f32" for the vectors of lanes.c. */
static void llvm_type_suffix(cg_fn *f, LLVMTypeRef ty, char *out, size_t n)
{
    if (LLVMGetTypeKind(ty) == LLVMVectorTypeKind)
        snprintf(out, n, "v%u%s", LLVMGetVectorSize(ty), scalar_suffix(f, LLVMGetElementType(ty)));
    else
        snprintf(out, n, "%s", scalar_suffix(f, ty));
}

LLVMValueRef cg_intrinsic(cg_fn *f, const char *name, LLVMTypeRef ty, LLVMValueRef *args,
                          unsigned n)
{
    char full[96], suffix[16];
    llvm_type_suffix(f, ty, suffix, sizeof suffix);
    snprintf(full, sizeof full, "llvm.%s.%s", name, suffix);
    LLVMTypeRef params[3] = {ty, ty, ty};
    LLVMTypeRef fty = LLVMFunctionType(ty, params, n, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(f->mod, full);
    if (!fn)
        fn = LLVMAddFunction(f->mod, full, fty);
    return LLVMBuildCall2(f->b, fty, fn, args, n, name);
}

/* A libm function on the CPU ("sinf"/"sin") or its libdevice twin on NVPTX ("__nv_sinf"). */
static LLVMValueRef math_call(cg_fn *f, const char *base, LLVMTypeRef ty, LLVMValueRef *args,
                              unsigned n)
{
    char name[64];
    int single = ty == f->t_f32;
    snprintf(name, sizeof name, "%s%s%s", f->target == CG_TARGET_NVPTX ? "__nv_" : "", base,
             single ? "f" : "");
    LLVMTypeRef params[2] = {ty, ty};
    LLVMTypeRef fty = LLVMFunctionType(ty, params, n, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(f->mod, name);
    if (!fn)
        fn = LLVMAddFunction(f->mod, name, fty);
    return LLVMBuildCall2(f->b, fty, fn, args, n, base);
}

/* exp, log, sin, cos, pow: LLVM intrinsics on the CPU (lowered to libm calls where the target
 * has no instruction, which the JIT resolves), libdevice on NVPTX, whose backend cannot select
 * them. */
static LLVMValueRef transcendental(cg_fn *f, const char *name, LLVMTypeRef ty, LLVMValueRef *args,
                                   unsigned n)
{
    if (f->target == CG_TARGET_NVPTX)
        return math_call(f, name, ty, args, n);
    return cg_intrinsic(f, name, ty, args, n);
}

LLVMValueRef cg_emit_unary(cg_fn *f, int op, ir_type ty, LLVMValueRef a)
{
    LLVMBuilderRef b = f->b;
    /* the operand's own type: a vector when lanes.c packs statements */
    LLVMTypeRef lt = LLVMTypeOf(a);
    int fl = ir_type_is_float(ty), in = ir_type_is_int(ty);
    switch (op) {
    case IR_NEG:
        if (fl)
            return LLVMBuildFNeg(b, a, "neg");
        if (in)
            return LLVMBuildNeg(b, a, "neg");
        break;
    case IR_NOT:
        if (ty == IR_BOOL)
            return LLVMBuildNot(b, a, "not");
        if (in)
            return LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntEQ, a, LLVMConstNull(lt), ""), lt,
                                 "not");
        break;
    case IR_BITNOT:
        if (in || ty == IR_BOOL)
            return LLVMBuildNot(b, a, "bitnot");
        break;
    case IR_SQRT:
        if (fl)
            return cg_intrinsic(f, "sqrt", lt, &a, 1);
        break;
    case IR_EXP:
        if (fl)
            return transcendental(f, "exp", lt, &a, 1);
        break;
    case IR_LOG:
        if (fl)
            return transcendental(f, "log", lt, &a, 1);
        break;
    case IR_SIN:
        if (fl)
            return transcendental(f, "sin", lt, &a, 1);
        break;
    case IR_COS:
        if (fl)
            return transcendental(f, "cos", lt, &a, 1);
        break;
    case IR_TAN:
        if (fl)
            return math_call(f, "tan", lt, &a, 1);
        break;
    case IR_FLOOR:
    case IR_CEIL:
    case IR_ROUND:
    case IR_TRUNC: {
        if (in)
            return a; /* integers are whole already */
        static const char *const names[] = {"floor", "ceil", "round", "trunc"};
        if (fl)
            return cg_intrinsic(f, names[op - IR_FLOOR], lt, &a, 1);
        break;
    }
    case IR_ABS:
        if (fl)
            return cg_intrinsic(f, "fabs", lt, &a, 1);
        if (ty == IR_U32)
            return a;
        if (in)
            return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, a, LLVMConstNull(lt), ""),
                                   LLVMBuildNeg(b, a, ""), a, "abs");
        break;
    default: break;
    }
    cg_fail(f, "unary %s on %s", ir_unop_name(op), ir_type_name(ty));
    return NULL;
}

/* Floored signed division and modulo with x/0 = x%0 = 0. The divisor is made safe first
 * (0 and -1 become 1), since sdiv by 0 and INT_MIN / -1 are undefined (and trap on x86);
 * x / -1 is then -x (wrapping) and x % -1 is 0. */
static LLVMValueRef signed_divmod(cg_fn *f, int op, LLVMTypeRef lt, LLVMValueRef x,
                                  LLVMValueRef y)
{
    LLVMBuilderRef b = f->b;
    LLVMValueRef zero = LLVMConstNull(lt), one = LLVMConstInt(lt, 1, 0);
    LLVMValueRef minus1 = LLVMConstAllOnes(lt);
    LLVMValueRef y0 = LLVMBuildICmp(b, LLVMIntEQ, y, zero, "y0");
    LLVMValueRef ym1 = LLVMBuildICmp(b, LLVMIntEQ, y, minus1, "ym1");
    LLVMValueRef ys = LLVMBuildSelect(b, LLVMBuildOr(b, y0, ym1, ""), one, y, "ysafe");
    LLVMValueRef q = LLVMBuildSDiv(b, x, ys, "q");
    LLVMValueRef r = LLVMBuildSRem(b, x, ys, "r");
    /* C truncates; floor differs when the remainder is non-zero and its sign is not y's */
    LLVMValueRef adjust =
        LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntNE, r, zero, ""),
                     LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildXor(b, r, ys, ""), zero, ""), "adj");
    LLVMValueRef v;
    if (op == IR_DIV) {
        v = LLVMBuildSelect(b, adjust, LLVMBuildSub(b, q, one, ""), q, "fdiv");
        v = LLVMBuildSelect(b, ym1, LLVMBuildNeg(b, x, ""), v, "");
    } else {
        v = LLVMBuildSelect(b, adjust, LLVMBuildAdd(b, r, ys, ""), r, "fmod");
        v = LLVMBuildSelect(b, ym1, zero, v, "");
    }
    return LLVMBuildSelect(b, y0, zero, v, op == IR_DIV ? "div" : "mod");
}

static LLVMValueRef unsigned_divmod(cg_fn *f, int op, LLVMTypeRef lt, LLVMValueRef x,
                                    LLVMValueRef y)
{
    LLVMBuilderRef b = f->b;
    LLVMValueRef zero = LLVMConstNull(lt);
    LLVMValueRef y0 = LLVMBuildICmp(b, LLVMIntEQ, y, zero, "y0");
    LLVMValueRef ys = LLVMBuildSelect(b, y0, LLVMConstInt(lt, 1, 0), y, "ysafe");
    LLVMValueRef v = op == IR_DIV ? LLVMBuildUDiv(b, x, ys, "q") : LLVMBuildURem(b, x, ys, "r");
    return LLVMBuildSelect(b, y0, zero, v, op == IR_DIV ? "div" : "mod");
}

static LLVMValueRef compare(cg_fn *f, int op, ir_type ty, LLVMValueRef x, LLVMValueRef y)
{
    int k = op - IR_LT; /* lt le gt ge eq ne */
    if (ir_type_is_float(ty)) {
        static const LLVMRealPredicate p[] = {LLVMRealOLT, LLVMRealOLE, LLVMRealOGT,
                                              LLVMRealOGE, LLVMRealOEQ, LLVMRealUNE};
        return LLVMBuildFCmp(f->b, p[k], x, y, "cmp");
    }
    static const LLVMIntPredicate sp[] = {LLVMIntSLT, LLVMIntSLE, LLVMIntSGT,
                                          LLVMIntSGE, LLVMIntEQ, LLVMIntNE};
    static const LLVMIntPredicate up[] = {LLVMIntULT, LLVMIntULE, LLVMIntUGT,
                                          LLVMIntUGE, LLVMIntEQ, LLVMIntNE};
    return LLVMBuildICmp(f->b, ir_type_is_signed(ty) ? sp[k] : up[k], x, y, "cmp");
}

LLVMValueRef cg_emit_binary(cg_fn *f, int op, ir_type ty, LLVMValueRef x, LLVMValueRef y)
{
    LLVMBuilderRef b = f->b;
    LLVMTypeRef lt = LLVMTypeOf(x); /* a vector when lanes.c packs statements */
    int fl = ir_type_is_float(ty), in = ir_type_is_int(ty), sg = ir_type_is_signed(ty);
    if (ir_binop_is_cmp(op))
        return compare(f, op, ty, x, y);
    switch (op) {
    case IR_ADD:
        if (fl || in)
            return fl ? LLVMBuildFAdd(b, x, y, "add") : LLVMBuildAdd(b, x, y, "add");
        break;
    case IR_SUB:
        if (fl || in)
            return fl ? LLVMBuildFSub(b, x, y, "sub") : LLVMBuildSub(b, x, y, "sub");
        break;
    case IR_MUL:
        if (fl || in)
            return fl ? LLVMBuildFMul(b, x, y, "mul") : LLVMBuildMul(b, x, y, "mul");
        break;
    case IR_DIV:
    case IR_MOD:
        if (fl && op == IR_DIV)
            return LLVMBuildFDiv(b, x, y, "div");
        if (fl) {
            /* x - y * floor(x / y) */
            LLVMValueRef q = LLVMBuildFDiv(b, x, y, "");
            q = cg_intrinsic(f, "floor", lt, &q, 1);
            return LLVMBuildFSub(b, x, LLVMBuildFMul(b, y, q, ""), "mod");
        }
        if (in)
            return sg ? signed_divmod(f, op, lt, x, y) : unsigned_divmod(f, op, lt, x, y);
        break;
    case IR_MIN:
    case IR_MAX: {
        if (fl) {
            LLVMValueRef a[2] = {x, y};
            return cg_intrinsic(f, op == IR_MIN ? "minnum" : "maxnum", lt, a, 2);
        }
        if (in) {
            LLVMIntPredicate p = op == IR_MIN ? (sg ? LLVMIntSLT : LLVMIntULT)
                                              : (sg ? LLVMIntSGT : LLVMIntUGT);
            return LLVMBuildSelect(b, LLVMBuildICmp(b, p, x, y, ""), x, y,
                                   op == IR_MIN ? "min" : "max");
        }
        break;
    }
    case IR_POW: {
        if (fl) {
            LLVMValueRef a[2] = {x, y};
            return transcendental(f, "pow", lt, a, 2);
        }
        break; /* the verifier allows pow on floats only */
    }
    case IR_ATAN2:
        if (fl) {
            LLVMValueRef a[2] = {x, y};
            return math_call(f, "atan2", lt, a, 2);
        }
        break;
    case IR_AND:
    case IR_OR:
    case IR_XOR:
        if (in || ty == IR_BOOL)
            return op == IR_AND  ? LLVMBuildAnd(b, x, y, "and")
                   : op == IR_OR ? LLVMBuildOr(b, x, y, "or")
                                 : LLVMBuildXor(b, x, y, "xor");
        break;
    case IR_SHL:
    case IR_SHR: {
        if (!in)
            break;
        unsigned bits = ty == IR_I64 ? 64 : 32;
        LLVMValueRef n = LLVMBuildAnd(b, y, LLVMConstInt(lt, bits - 1, 0), "shcount");
        if (op == IR_SHL)
            return LLVMBuildShl(b, x, n, "shl");
        return sg ? LLVMBuildAShr(b, x, n, "shr") : LLVMBuildLShr(b, x, n, "shr");
    }
    default: break;
    }
    cg_fail(f, "binary %s on %s", ir_binop_name(op), ir_type_name(ty));
    return NULL;
}

LLVMValueRef cg_emit_cast(cg_fn *f, ir_type to, ir_type from, LLVMValueRef a)
{
    LLVMBuilderRef b = f->b;
    LLVMTypeRef tt = cg_type(f, to), ft = cg_type(f, from);
    if (to == from)
        return a;
    if (to == IR_BOOL) {
        if (ir_type_is_float(from))
            return LLVMBuildFCmp(b, LLVMRealUNE, a, LLVMConstNull(ft), "tobool");
        if (ir_type_is_int(from))
            return LLVMBuildICmp(b, LLVMIntNE, a, LLVMConstNull(ft), "tobool");
    } else if (ir_type_is_int(to)) {
        if (from == IR_BOOL)
            return LLVMBuildZExt(b, a, tt, "cast");
        if (ir_type_is_int(from))
            return LLVMBuildIntCast2(b, a, tt, ir_type_is_signed(from), "cast");
        if (ir_type_is_float(from)) {
            /* saturating: out-of-range values clamp and NaN gives 0, instead of poison */
            char name[64];
            snprintf(name, sizeof name, "llvm.%s.sat.%s.%s",
                     ir_type_is_signed(to) ? "fptosi" : "fptoui", to == IR_I64 ? "i64" : "i32",
                     from == IR_F32 ? "f32" : "f64");
            LLVMTypeRef fty = LLVMFunctionType(tt, &ft, 1, 0);
            LLVMValueRef fn = LLVMGetNamedFunction(f->mod, name);
            if (!fn)
                fn = LLVMAddFunction(f->mod, name, fty);
            return LLVMBuildCall2(b, fty, fn, &a, 1, "cast");
        }
    } else if (ir_type_is_float(to)) {
        if (from == IR_BOOL)
            return LLVMBuildUIToFP(b, a, tt, "cast");
        if (ir_type_is_int(from))
            return ir_type_is_signed(from) ? LLVMBuildSIToFP(b, a, tt, "cast")
                                           : LLVMBuildUIToFP(b, a, tt, "cast");
        if (ir_type_is_float(from))
            return LLVMBuildFPCast(b, a, tt, "cast");
    }
    cg_fail(f, "cast from %s to %s", ir_type_name(from), ir_type_name(to));
    return NULL;
}
