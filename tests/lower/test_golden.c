/* Golden IR of a few small kernels, written by hand from lower.h and docs/language.md: a
 * parallel range loop, an inlined function returning from inside a loop (leave flag), a
 * struct-for over a vec3 field with a swizzle assignment and an atomic reduction into a 0-D
 * field, and a parallel ivec2 box (one linear range, x fastest, constant extents folded). */
#include "tests/check.h"
#include "lower_util.h"

static void golden(const char *src, const char *kernel, const ir_field_info *fi, uint32_t nf,
                   const char *want)
{
    char err[1024];
    ir_task *t = lt_lower(src, kernel, fi, nf, err, sizeof err);
    if (!t) {
        fprintf(stderr, "%s: %s\n", kernel, err);
        check_failures++;
        return;
    }
    char *got = ir_print_task(t);
    CHECK_STR(got, want);
    free(got);
    ir_task_free(t);
}

static void saxpy(void)
{
    ir_field_info fi[2] = {lt_field("x", IR_F32, 1, 1, 10), lt_field("y", IR_F32, 1, 1, 10)};
    golden("kernel saxpy(field<f32, 1> x, field<f32, 1> y, f32 a, i32 n) {\n"
           "    for (i in 0 .. n) { y[i] = a * x[i] + y[i]; }\n"
           "}\n",
           "saxpy", fi, 2,
           "task kernel \"saxpy\" {\n"
           "  $0 = arg f32 #0\n"
           "  $1 = arg i32 #1\n"
           "  $2 = const i32 0\n"
           "  $3 : range_for $2 $1 parallel {\n"
           "    $4 = loop_index i32 $3 0\n"
           "    $5 = global_ptr ptr<f32> @y [$4]\n"
           "    $6 = global_ptr ptr<f32> @x [$4]\n"
           "    $7 = global_load f32 $6\n"
           "    $8 = mul f32 $0 $7\n"
           "    $9 = global_ptr ptr<f32> @y [$4]\n"
           "    $10 = global_load f32 $9\n"
           "    $11 = add f32 $8 $10\n"
           "    $12 : global_store $5 $11\n"
           "  }\n"
           "}\n");
}

/* The return inside the range loop sets the wrapper's flag and leaves the range loop; after
 * it, the flag leaves the one-shot while. */
static void early_return(void)
{
    ir_field_info fi[1] = {lt_field("out", IR_I32, 1, 0, 0)};
    golden("func i32 find(i32 n) {\n"
           "    for (i in 0 .. n) {\n"
           "        if (i * i > n) { return i; }\n"
           "    }\n"
           "    return -1;\n"
           "}\n"
           "kernel k(field<i32, 0> out, i32 n) { out[] = find(n); }\n",
           "k", fi, 1,
           "task kernel \"k\" {\n"
           "  $0 = arg i32 #0\n"
           "  $1 = global_ptr ptr<i32> @out []\n"
           "  $2 = alloca ptr<i32>\n"
           "  $3 = alloca ptr<bool>\n"
           "  $4 : while {\n"
           "    $5 = const i32 0\n"
           "    $6 : range_for $5 $0 {\n"
           "      $7 = loop_index i32 $6 0\n"
           "      $8 = mul i32 $7 $7\n"
           "      $9 = gt bool $8 $0\n"
           "      $10 : if $9 {\n"
           "        $11 : store $2 $7\n"
           "        $12 = const bool true\n"
           "        $13 : store $3 $12\n"
           "        $14 : break $6\n"
           "      }\n"
           "    }\n"
           "    $15 = load bool $3\n"
           "    $16 : if $15 {\n"
           "      $17 : break $4\n"
           "    }\n"
           "    $18 = const i32 -1\n"
           "    $19 : store $2 $18\n"
           "    $20 : break $4\n"
           "  }\n"
           "  $21 = load i32 $2\n"
           "  $22 : global_store $1 $21\n"
           "}\n");
}

/* p is assigned, so it lives in allocas; a read of p loads every component. */
static void swizzle_atomic(void)
{
    ir_field_info fi[2] = {lt_field("v", IR_F32, 3, 3, 3), lt_field("s", IR_F32, 1, 0, 0)};
    golden("kernel g(field<vec3> v, field<f32, 0> s) {\n"
           "    for (I in v) {\n"
           "        vec3 p = v[I];\n"
           "        p.xz = p.zx;\n"
           "        s[] += p.x;\n"
           "    }\n"
           "}\n",
           "g", fi, 2,
           "task kernel \"g\" {\n"
           "  $0 : struct_for @v {\n"
           "    $1 = loop_index i32 $0 0\n"
           "    $2 = loop_index i32 $0 1\n"
           "    $3 = loop_index i32 $0 2\n"
           "    $4 = global_ptr ptr<f32> @v.0 [$1 $2 $3]\n"
           "    $5 = global_ptr ptr<f32> @v.1 [$1 $2 $3]\n"
           "    $6 = global_ptr ptr<f32> @v.2 [$1 $2 $3]\n"
           "    $7 = global_load f32 $4\n"
           "    $8 = global_load f32 $5\n"
           "    $9 = global_load f32 $6\n"
           "    $10 = alloca ptr<f32>\n"
           "    $11 : store $10 $7\n"
           "    $12 = alloca ptr<f32>\n"
           "    $13 : store $12 $8\n"
           "    $14 = alloca ptr<f32>\n"
           "    $15 : store $14 $9\n"
           "    $16 = load f32 $10\n"
           "    $17 = load f32 $12\n"
           "    $18 = load f32 $14\n"
           "    $19 : store $10 $18\n"
           "    $20 : store $14 $16\n"
           "    $21 = global_ptr ptr<f32> @s []\n"
           "    $22 = load f32 $10\n"
           "    $23 = load f32 $12\n"
           "    $24 = load f32 $14\n"
           "    $25 = atomic_add f32 $21 $22\n"
           "  }\n"
           "}\n");
}

/* Box [0,4) x [0,3): extents 4 and 3 folded, 12 iterations, the last axis fastest as dense
 * fields store it: y = i % 3, x = i / 3. */
static void box(void)
{
    ir_field_info fi[1] = {lt_field("img", IR_F32, 1, 2, 4)};
    golden("kernel b(field<f32, 2> img, i32 w) {\n"
           "    for (P in ivec2(0, 0) .. ivec2(4, 3)) { img[P] = f32(P.x) + f32(w); }\n"
           "}\n",
           "b", fi, 1,
           "task kernel \"b\" {\n"
           "  $0 = arg i32 #0\n"
           "  $1 = const i32 0\n"
           "  $2 = const i32 0\n"
           "  $3 = const i32 4\n"
           "  $4 = const i32 3\n"
           "  $5 = const i32 4\n"
           "  $6 = const i32 4\n"
           "  $7 = const i64 4\n"
           "  $8 = const i32 3\n"
           "  $9 = const i32 3\n"
           "  $10 = const i64 3\n"
           "  $11 = const i64 12\n"
           "  $12 = const i64 0\n"
           "  $13 : range_for $12 $11 parallel {\n"
           "    $14 = loop_index i64 $13 0\n"
           "    $15 = mod i64 $14 $10\n"
           "    $16 = div i64 $14 $10\n"
           "    $17 = cast i32 $15\n"
           "    $18 = add i32 $2 $17\n"
           "    $19 = cast i32 $16\n"
           "    $20 = add i32 $1 $19\n"
           "    $21 = global_ptr ptr<f32> @img [$20 $18]\n"
           "    $22 = cast f32 $20\n"
           "    $23 = cast f32 $0\n"
           "    $24 = add f32 $22 $23\n"
           "    $25 : global_store $21 $24\n"
           "  }\n"
           "}\n");
}

int main(void)
{
    saxpy();
    early_return();
    swizzle_atomic();
    box();
    CHECK_DONE();
}
