/* What lower_kernel refuses, and how it says so: field descriptors that do not match the
 * declared parameters (element type, components, dimension, count), missing arguments. Also
 * the argument list of lower.h (scalar components, then one f32 voxel size per field slot),
 * and that the standard library's functions and every field element type lower to IR that
 * verifies. */
#include "tests/check.h"
#include "lower_util.h"

static void expect_error(const char *src, const ir_field_info *fi, uint32_t nf,
                         const char *const *parts)
{
    char err[1024] = "";
    ir_task *t = lt_lower(src, "k", fi, nf, err, sizeof err);
    CHECK(t == NULL);
    if (t)
        ir_task_free(t);
    for (int i = 0; parts[i]; i++)
        if (!strstr(err, parts[i])) {
            fprintf(stderr, "message '%s' lacks '%s'\n", err, parts[i]);
            check_failures++;
        }
}

static void descriptors(void)
{
    const char *src = "kernel k(field<f32> a, field<vec3, 2> v, f32 s) {\n"
                      "    a[ivec3(0)] = s + v[ivec2(1, 2)].y;\n"
                      "}\n";
    ir_field_info ok[2] = {lt_field("a", IR_F32, 1, 3, 3), lt_field("v", IR_F32, 3, 2, 3)};
    char err[512] = "";
    ir_task *t = lt_lower(src, "k", ok, 2, err, sizeof err);
    CHECK(t != NULL);
    if (!t)
        fprintf(stderr, "%s\n", err);
    ir_task_free(t);

    ir_field_info bad_elem[2] = {lt_field("a", IR_I32, 1, 3, 3), ok[1]};
    const char *p1[] = {"t.pk:1:", "parameter 'a'", "i32 x1", "f32 x1", NULL};
    expect_error(src, bad_elem, 2, p1);

    ir_field_info bad_comps[2] = {ok[0], lt_field("v", IR_F32, 1, 2, 3)};
    const char *p2[] = {"t.pk:1:", "parameter 'v'", "f32 x3", NULL};
    expect_error(src, bad_comps, 2, p2);

    ir_field_info bad_dim[2] = {ok[0], lt_field("v", IR_F32, 3, 3, 3)};
    const char *p3[] = {"t.pk:1:", "parameter 'v'", "dimension 3", "needs 2", NULL};
    expect_error(src, bad_dim, 2, p3);

    const char *p4[] = {"t.pk:1:", "no field descriptor", "'v'", NULL};
    expect_error(src, ok, 1, p4);

    ir_field_info three[3] = {ok[0], ok[1], ok[0]};
    const char *p5[] = {"t.pk:1:", "3 field descriptors for 2 field parameters", NULL};
    expect_error(src, three, 3, p5);

    ir_task *out = (ir_task *)&out;
    CHECK(lower_kernel(NULL, NULL, NULL, 0, &out, err, sizeof err) == -1);
    CHECK(out == NULL);
    CHECK(strstr(err, "lower") != NULL);
    CHECK(lower_kernel(NULL, NULL, NULL, 0, NULL, NULL, 0) == -1); /* no buffer: no crash */
}

static void arguments(void)
{
    const char *src = "kernel k(f32 a, field<f32, 1> f, vec3 b, mat3 m, field<i32, 1> g,\n"
                      "         ivec2 c, u32 d, f64 e, i64 h, bool q) {\n"
                      "    g[1] = i32(a) + c.y + i32(d) + i32(e) + i32(h) + (q ? 1 : 0);\n"
                      "    f[0] = b.z + m[2][1] + voxel_size(f) + voxel_size(g);\n"
                      "}\n";
    ir_field_info fi[2] = {lt_field("f", IR_F32, 1, 1, 4), lt_field("g", IR_I32, 1, 1, 4)};
    char err[512] = "";
    ir_task *t = lt_lower(src, "k", fi, 2, err, sizeof err);
    CHECK(t != NULL);
    if (!t) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    const ir_type want[] = {IR_F32, IR_F32, IR_F32, IR_F32,                 /* a, b */
                            IR_F32, IR_F32, IR_F32, IR_F32, IR_F32, IR_F32, /* m */
                            IR_F32, IR_F32, IR_F32, IR_I32, IR_I32,         /* m, c */
                            IR_U32, IR_F64, IR_I64, IR_BOOL,                /* d e h q */
                            IR_F32, IR_F32};                                /* voxel sizes */
    CHECK(t->nargs == sizeof want / sizeof want[0]);
    for (uint32_t i = 0; i < t->nargs && i < sizeof want / sizeof want[0]; i++)
        CHECK(t->arg_types[i] == want[i]);
    CHECK(t->kind == IR_TASK_KERNEL);
    CHECK(t->nfields == 2);
    /* m[2][1] is argument 1 + 3 + 2 * 3 + 1 = 11; voxel_size(g) is argument 20 */
    char *txt = ir_print_task(t);
    CHECK(txt && strstr(txt, "arg f32 #11\n") && strstr(txt, "arg f32 #20\n"));
    free(txt);
    ir_task_free(t);
}

/* The stdlib's functions (overloads included) and every field element type lower and
 * verify (lower_kernel verifies its result). */
static void stdlib_and_elements(void)
{
    const char *src =
        "kernel k(field<f32> f, field<vec3> u, field<f32> o, field<vec2, 1> p,\n"
        "         field<f64, 1> d, field<i32, 2> n) {\n"
        "    for (I in f) {\n"
        "        vec3 q = vec3(I) + vec3(0.5);\n"
        "        vec3 g = gradient(f, I) + sample(u, q);\n"
        "        o[I] = sample(f, q) + laplacian(f, I) + divergence(u, I) + g.x;\n"
        "        p[I.x] = p[I.x].yx + vec2(d[I.y]);\n"
        "        n[I.xy] += i32(d[I.z]);\n"
        "    }\n"
        "}\n";
    ir_field_info fi[6] = {lt_field("f", IR_F32, 1, 3, 3), lt_field("u", IR_F32, 3, 3, 3),
                           lt_field("o", IR_F32, 1, 3, 3), lt_field("p", IR_F32, 2, 1, 6),
                           lt_field("d", IR_F64, 1, 1, 6), lt_field("n", IR_I32, 1, 2, 6)};
    char err[512] = "";
    ir_task *t = lt_lower(src, "k", fi, 6, err, sizeof err);
    CHECK(t != NULL);
    if (!t)
        fprintf(stderr, "%s\n", err);
    ir_task_free(t);
}

/* A source of `n` nested loops inside the kernel's struct-for: a box loop over ivec3 (three
 * IR loops each) or a plain range loop. Returns a malloc'd text. */
static char *nested_source(int n, int box)
{
    size_t cap = 200 + (size_t)n * 160;
    char *src = malloc(cap);
    size_t len = (size_t)snprintf(src, cap, "kernel k(field<f32> q, i32 m) {\n    for (I in q) {\n");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(src + len, cap - len,
                                box ? "for (P%d in ivec3(0, 0, 0) .. ivec3(m, m, m)) {\n"
                                    : "for (j%d in 0 .. m) {\n", i);
    len += (size_t)snprintf(src + len, cap - len, "q[I] = 1.0;\n");
    for (int i = 0; i < n + 2; i++)
        len += (size_t)snprintf(src + len, cap - len, "}\n");
    return src;
}

/* Errors found while lowering start with the place, as the front end's do
 * ("file:line:col: error: kernel 'k': ..."), and name the line that crosses a limit: loops
 * nested past what the code generator keeps open (it said "loops nested deeper than 64" with
 * no place, and 90 box loops "the IR does not verify"), a component index that is a constant
 * only after folding. */
static void located(void)
{
    ir_field_info fi[1] = {lt_field("q", IR_F32, 1, 3, 3)};
    /* the struct-for and 55 loops: 56 open, the limit */
    char *src = nested_source(55, 0);
    char err[1024] = "";
    ir_task *t = lt_lower(src, "k", fi, 1, err, sizeof err);
    CHECK(t != NULL);
    if (!t)
        fprintf(stderr, "%s\n", err);
    ir_task_free(t);
    free(src);
    /* one more: the loop on line 58 (2 + 56) is the 57th */
    src = nested_source(56, 0);
    const char *deep[] = {"t.pk:58:1: error: kernel 'k': loops nested more than 56 deep", NULL};
    expect_error(src, fi, 1, deep);
    free(src);
    /* box loops: 18 of them are 54 IR loops with the struct-for's 55; the 19th crosses at its
     * own line (2 + 19 = 21) */
    src = nested_source(30, 1);
    const char *boxes[] = {"t.pk:21:1: error: kernel 'k': loops nested more than 56 deep", NULL};
    expect_error(src, fi, 1, boxes);
    free(src);

    const char *folded = "kernel k(field<vec3> v) {\n"
                         "    for (I in v) {\n"
                         "        i32 n = 5;\n"
                         "        v[I] = vec3(v[I][n]);\n"
                         "    }\n"
                         "}\n";
    ir_field_info vf[1] = {lt_field("v", IR_F32, 3, 3, 3)};
    const char *comp[] = {"t.pk:4:", ": error: kernel 'k': component index 5 is out of range for vec3", NULL};
    expect_error(folded, vf, 1, comp);
}

int main(void)
{
    descriptors();
    located();
    arguments();
    stdlib_and_elements();
    CHECK_DONE();
}
