/* test_ast.c — the shape of the typed AST for small programs, compared with S-expression
 * dumps written by hand from the grammar and the typing rules in docs/language.md. */
#include "lang_test.h"

typedef struct ast_case {
    const char *name;
    const char *src;
    const char *want; /* pk_print_program() of the user's declarations */
} ast_case;

static const ast_case cases[] = {
    {"design doc restriction: struct-for, atomic +=, ivec3 / int literal",
     "kernel restrict(field<f32> fine, field<f32> coarse) {\n"
     "    for (I in fine) coarse[I / 2] += 0.125 * fine[I];\n"
     "}\n",
     "(kernel restrict ((field fine f32 3) (field coarse f32 3))\n"
     "  (block\n"
     "    (for-field parallel I ivec3 @fine\n"
     "      (assign += atomic (fa f32 coarse (div ivec3 I (splat ivec3 2:i32))) "
     "(mul f32 0.125:f32 (fa f32 fine I))))))\n"},
    {"literal adaptation and implicit widening",
     "func f64 f(f32 x, i32 i, f64 d) {\n"
     "    f64 a = 2;\n"
     "    f32 b = x * i + 1;\n"
     "    return a + b * d;\n"
     "}\n",
     "(func f64 f ((param x f32) (param i i32) (param d f64))\n"
     "  (block\n"
     "    (decl a f64 2:f64)\n"
     "    (decl b f32 (add f32 (mul f32 x (conv f32 i)) 1:f32))\n"
     "    (return (add f64 a (mul f64 (conv f64 b) d)))))\n"},
    {"vectors: broadcast, swizzles, components, matrix product",
     "func vec3 g(vec3 v, mat3 m, f32 s) {\n"
     "    vec3 w = 2.0 * v + s;\n"
     "    w.xy = v.yx;\n"
     "    w[2] *= 0.5;\n"
     "    return m * w - v.zzz;\n"
     "}\n",
     "(func vec3 g ((param v vec3) (param m mat3) (param s f32))\n"
     "  (block\n"
     "    (decl w vec3 (add vec3 (mul vec3 (splat vec3 2:f32) v) (splat vec3 s)))\n"
     "    (assign = (.xy vec2 w) (.yx vec2 v))\n"
     "    (assign *= (comp f32 w 2:i32) 0.5:f32)\n"
     "    (return (sub vec3 (matmul vec3 m w) (.zzz vec3 v)))))\n"},
    {"kernel: serial code, 0-D reductions, max=, index sugar, static loop in a range loop",
     "kernel r(field<f32> q, field<f32, 0> total, field<f32, 0> peak, i32 n) {\n"
     "    total[] = 0.0;\n"
     "    for (I in q) {\n"
     "        total[] += q[I];\n"
     "        peak[] max= q[I.x, I.y, 0];\n"
     "    }\n"
     "    for (i in 0 .. n) {\n"
     "        for (static d in -1 .. 1 + 1) q[i, d, 1 << 2] = f32(i);\n"
     "    }\n"
     "}\n",
     "(kernel r ((field q f32 3) (field total f32 0) (field peak f32 0) (param n i32))\n"
     "  (block\n"
     "    (assign = (fa f32 total) 0:f32)\n"
     "    (for-field parallel I ivec3 @q\n"
     "      (block\n"
     "        (assign += atomic (fa f32 total) (fa f32 q I))\n"
     "        (assign max= atomic (fa f32 peak) (fa f32 q (ivec3 (.x i32 I) (.y i32 I) 0:i32)))))\n"
     "    (for parallel i i32 0:i32 n\n"
     "      (block\n"
     "        (for-static d -1 2\n"
     "          (assign = (fa f32 q (ivec3 i d 4:i32)) (cast f32 i)))))))\n"},
    {"constants, C-style function, field parameters, select, field builtins",
     "const i32 N = 4 * 2;\n"
     "float half(float x) { return x / 2; }\n"
     "func f32 pick(field<f32> f, ivec3 I, bool hi) {\n"
     "    return hi ? f[I] : half(f[I]);\n"
     "}\n"
     "kernel k(field<f32> a, field<f32> b) {\n"
     "    for (I in a) {\n"
     "        if (is_active(b, I)) {\n"
     "            b[I] = pick(a, I, a[I] > 0.5) + f32(N);\n"
     "        } else {\n"
     "            activate(b, I);\n"
     "        }\n"
     "    }\n"
     "}\n",
     "(const N i32 8:i32)\n"
     "(func f32 half ((param x f32))\n"
     "  (block\n"
     "    (return (div f32 x 2:f32))))\n"
     "(func f32 pick ((field f f32 3) (param I ivec3) (param hi bool))\n"
     "  (block\n"
     "    (return (select f32 hi (fa f32 f I) (call f32 half (fa f32 f I))))))\n"
     "(kernel k ((field a f32 3) (field b f32 3))\n"
     "  (block\n"
     "    (for-field parallel I ivec3 @a\n"
     "      (block\n"
     "        (if (is_active bool @b I)\n"
     "          (block\n"
     "            (assign = (fa f32 b I) (add f32 (call f32 pick @a I (gt bool (fa f32 a I) 0.5:f32)) (cast f32 N))))\n"
     "          (block\n"
     "            (expr (activate void @b I))))))))\n"},
    {"integers: floored folding, u32, bitwise, widening, 1-D/2-D fields, box range",
     "kernel ints(field<i32, 1> c, field<f32, 2> img, u32 seed, i64 big) {\n"
     "    i32 m = -7 / 2;\n"
     "    i64 w = m + big;\n"
     "    bool odd = (seed & 1u) == 1u;\n"
     "    for (P in ivec2(0) .. ivec2(4, 4)) img[P] = 1.0;\n"
     "    if (odd && w > 0) c[m % 3] = 1 << 3;\n"
     "}\n",
     "(kernel ints ((field c i32 1) (field img f32 2) (param seed u32) (param big i64))\n"
     "  (block\n"
     "    (decl m i32 -4:i32)\n"
     "    (decl w i64 (add i64 (conv i64 m) big))\n"
     "    (decl odd bool (eq bool (bitand u32 seed 1:u32) 1:u32))\n"
     "    (for parallel P ivec2 (splat ivec2 0:i32) (ivec2 4:i32 4:i32)\n"
     "      (assign = (fa f32 img P) 1:f32))\n"
     "    (if (and bool odd (gt bool w 0:i64))\n"
     "      (assign = (fa i32 c (mod i32 m 3:i32)) 8:i32))))\n"},
    {"functions: field compound assignment is atomic, void functions, while, mat3(s)",
     "func splat_add(field<vec3> v, ivec3 I, f32 s) {\n"
     "    v[I] += s;\n"
     "}\n"
     "kernel m(field<vec3> v) {\n"
     "    mat3 id = mat3(1.0);\n"
     "    i32 k = 0;\n"
     "    while (k < 2) { k += 1; }\n"
     "    for (I in v) splat_add(v, I, determinant(id));\n"
     "}\n",
     "(func void splat_add ((field v vec3 3) (param I ivec3) (param s f32))\n"
     "  (block\n"
     "    (assign += atomic (fa vec3 v I) (splat vec3 s))))\n"
     "(kernel m ((field v vec3 3))\n"
     "  (block\n"
     "    (decl id mat3 (mat3 1:f32))\n"
     "    (decl k i32 0:i32)\n"
     "    (while (lt bool k 2:i32)\n"
     "      (block\n"
     "        (assign += k 1:i32)))\n"
     "    (for-field parallel I ivec3 @v\n"
     "      (expr (call void splat_add @v I (determinant f32 id))))))\n"},
    {"f32 literals print the value the program holds (2^24 + 1 rounds to 2^24, 1e-50 to 0)",
     "func f32 g() {\n"
     "    f32 x = 16777217.0;\n"
     "    f32 y = 1e-50;\n"
     "    f64 z = 16777217.0;\n"
     "    return x + y + f32(z);\n"
     "}\n",
     "(func f32 g ()\n"
     "  (block\n"
     "    (decl x f32 16777216:f32)\n"
     "    (decl y f32 0:f32)\n"
     "    (decl z f64 16777217:f64)\n"
     "    (return (add f32 (add f32 x y) (cast f32 z)))))\n"},
};

int main(void) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const ast_case *c = &cases[i];
        pk_result *r = lt_compile(c->src, 1);
        LT_CHECK(pk_result_ok(r), "%s: does not compile:\n%s", c->name, pk_result_text(r));
        if (pk_result_ok(r)) {
            char *got = pk_print_program(pk_result_program(r), 0);
            LT_CHECK(got && strcmp(got, c->want) == 0, "%s: AST differs", c->name);
            if (got && strcmp(got, c->want) != 0)
                lt_show_diff(c->name, c->want, got);
            free(got);
        }
        pk_result_free(r);
    }
    return lt_finish("lang_ast");
}
