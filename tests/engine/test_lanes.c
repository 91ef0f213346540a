/* The same float expression stored into several fields, done in vectors one lane per store
 * (engine/codegen/lanes.c): values as a C loop computes them, the vector code really made, and
 * the two ways moving a store to the set's last store could go wrong (a later read of the
 * stored field, through the same slot or through another slot bound to the same field) still
 * giving the kernel's own order. */
#include "engine_test.h"
#include "checker.h"

#include "engine/listing.h"

#include <stdint.h>

static eng_context *ctx;

/* Three linear blends, one per quantity, between the voxel and its +x neighbour (which may be
 * inactive: the background), as a fused advection of three quantities leaves them. */
static const char *blend_src =
    "kernel blend3(field<f32> dom, field<f32> a, field<f32> b, field<f32> c,\n"
    "              field<f32> oa, field<f32> ob, field<f32> oc, f32 t) {\n"
    "    for (I in dom) {\n"
    "        ivec3 j = I + ivec3(1, 0, 0);\n"
    "        oa[I] = max(a[I] + (a[j] - a[I]) * t, -1.5);\n"
    "        ob[I] = max(b[I] + (b[j] - b[I]) * t, -1.5);\n"
    "        oc[I] = max(c[I] + (c[j] - c[I]) * t, -1.5);\n"
    "    }\n"
    "}\n";

static float blend(int f, int x, int y, int z, float t)
{
    float v0 = at_bg(f, x, y, z, 0.5f), v1 = at_bg(f, x + 1, y, z, 0.5f);
    return fmaxf(v0 + (v1 - v0) * t, -1.5f);
}

static void test_blend_values(void)
{
    eng_field *dom = et_field(ctx, "b_dom", 3, ENG_F32, 0.0f);
    eng_field *in[3], *out[3];
    static const char *const ni[3] = {"b_a", "b_b", "b_c"}, *const no[3] = {"b_oa", "b_ob", "b_oc"};
    checker_fill(ctx, dom, 9, 1);
    for (int q = 0; q < 3; q++) {
        in[q] = et_field(ctx, ni[q], 3, ENG_F32, 0.5f);
        out[q] = et_field(ctx, no[q], 3, ENG_F32, 0.0f);
        checker_fill(ctx, in[q], q, 1);
    }
    eng_program *p = et_compile(ctx, blend_src);
    eng_arg args[8] = {et_f(dom), et_f(in[0]), et_f(in[1]), et_f(in[2]),
                       et_f(out[0]), et_f(out[1]), et_f(out[2]), et_s(0.375)};
    if (et_run(ctx, p, "blend3", args, 8))
        return;
    int bad = 0, n = 0;
    FOR_ACTIVE(x, y, z) {
        for (int q = 0; q < 3; q++, n++) {
            float want = blend(q, x, y, z, 0.375f), got = et_at(out[q], x, y, z, 0);
            if (got != want && bad++ < 5)
                fprintf(stderr, "blend q%d (%d,%d,%d): %g, expected %g\n", q, x, y, z,
                        got, want);
        }
    }
    CHECK(bad == 0);
    CHECK(n == 3 * 32 * 512);
}

/* The kernel's optimized LLVM has the blends as 3-lane vector arithmetic. */
static void test_blend_vectorized(void)
{
    char *text = NULL, err[512];
    int rc = eng_compile_listing("blend.pk", blend_src, strlen(blend_src), "blend3",
                                 ENG_LIST_LLVM, &text, err, sizeof err);
    CHECK_MSG(rc == ENG_LIST_OK, err);
    if (rc != ENG_LIST_OK)
        return;
    CHECK(strstr(text, "fsub <3 x float>") != NULL);
    CHECK(strstr(text, "fmul <3 x float>") != NULL);
    CHECK(strstr(text, "@llvm.maxnum.v3f32") != NULL);
    free(text);
}

/* Lane 2 reads, at a computed index (k = 0: its own voxel), the field lane 1 stores: through
 * another slot bound to the same field (run time) or through lane 1's own slot (seen in the
 * IR). The kernel's order reads the stored value; a store moved to the last store's place
 * would read the old one. */
static const char *alias_src =
    "kernel two(field<f32> dom, field<f32> a, field<f32> b, field<f32> d,\n"
    "           field<f32> oa, field<f32> ob, f32 t, i32 k) {\n"
    "    for (I in dom) {\n"
    "        ivec3 p = I + ivec3(k, 0, 0);\n"
    "        oa[I] = (a[p] - d[I]) * t + d[I];\n"
    "        ob[I] = (b[p] - d[I]) * t + d[I];\n"
    "    }\n"
    "}\n"
    "kernel same(field<f32> dom, field<f32> a, field<f32> d, field<f32> oa, field<f32> ob,\n"
    "            f32 t, i32 k) {\n"
    "    for (I in dom) {\n"
    "        ivec3 p = I + ivec3(k, 0, 0);\n"
    "        oa[I] = (a[p] - d[I]) * t + d[I];\n"
    "        ob[I] = (oa[p] - d[I]) * t + d[I];\n"
    "    }\n"
    "}\n";

static void check_chain(eng_field *ob, const char *what)
{
    int bad = 0;
    FOR_ACTIVE(x, y, z) {
        float d = pat(3, x, y, z), a = pat(0, x, y, z);
        float oa = (a - d) * 0.25f + d;
        float want = (oa - d) * 0.25f + d;
        float got = et_at(ob, x, y, z, 0);
        if (got != want && bad++ < 5)
            fprintf(stderr, "%s (%d,%d,%d): %g, expected %g\n", what, x, y, z, got, want);
    }
    CHECK(bad == 0);
}

static void test_store_then_read(void)
{
    eng_field *dom = et_field(ctx, "s_dom", 3, ENG_F32, 0.0f);
    eng_field *a = et_field(ctx, "s_a", 3, ENG_F32, 0.5f);
    eng_field *d = et_field(ctx, "s_d", 3, ENG_F32, 0.5f);
    eng_field *f = et_field(ctx, "s_f", 3, ENG_F32, 0.0f);
    eng_field *ob = et_field(ctx, "s_ob", 3, ENG_F32, 0.0f);
    checker_fill(ctx, dom, 9, 1);
    checker_fill(ctx, a, 0, 1);
    checker_fill(ctx, d, 3, 1);
    checker_fill(ctx, f, 5, 1); /* what a read before the store would see */
    eng_program *p = et_compile(ctx, alias_src);
    /* two(): oa and b are the same field f */
    eng_arg args[8] = {et_f(dom), et_f(a), et_f(f), et_f(d), et_f(f), et_f(ob), et_s(0.25),
                       et_s(0)};
    if (et_run(ctx, p, "two", args, 8) == 0)
        check_chain(ob, "two slots, one field");
    checker_fill(ctx, f, 5, 1);
    eng_arg sargs[7] = {et_f(dom), et_f(a), et_f(d), et_f(f), et_f(ob), et_s(0.25), et_s(0)};
    if (et_run(ctx, p, "same", sargs, 7) == 0)
        check_chain(ob, "one slot");
}

/* The components of one vec3 store are lanes too (disjoint bytes of one element), and a lane
 * statement that other code also uses stays scalar while the rest of its set is packed. A
 * component read back between the component stores, at an index the optimizer cannot tell
 * from the store's (k = 0), keeps the kernel's order. */
static const char *vec_src =
    "kernel vblend(field<f32> dom, field<vec3> a, field<vec3> o, f32 t) {\n"
    "    for (I in dom) {\n"
    "        o[I] = max(a[I] + (a[I + ivec3(1, 0, 0)] - a[I]) * t, vec3(-1.5));\n"
    "    }\n"
    "}\n"
    "kernel shared(field<f32> dom, field<f32> a, field<f32> b, field<f32> oa, field<f32> ob,\n"
    "              field<f32> oc, f32 t) {\n"
    "    for (I in dom) {\n"
    "        ivec3 j = I + ivec3(1, 0, 0);\n"
    "        f32 u = (a[j] - a[I]) * t;\n"
    "        oa[I] = max(a[I] + u, -1.5) * 0.5 + 0.25;\n"
    "        ob[I] = max(b[I] + (b[j] - b[I]) * t, -1.5) * 0.5 + 0.25;\n"
    "        oc[I] = u * u;\n"
    "    }\n"
    "}\n"
    "kernel readback(field<f32> dom, field<f32> a, field<vec3> o, f32 t, i32 k) {\n"
    "    for (I in dom) {\n"
    "        o[I].x = (a[I] - 1.0) * t + 1.0;\n"
    "        f32 r = o[I + ivec3(k, 0, 0)].x;\n"
    "        o[I].y = (r - 1.0) * t + 1.0;\n"
    "    }\n"
    "}\n";

static void test_vec_and_shared(void)
{
    char *text = NULL, err[512];
    int rc = eng_compile_listing("vec.pk", vec_src, strlen(vec_src), "vblend", ENG_LIST_LLVM,
                                 &text, err, sizeof err);
    CHECK_MSG(rc == ENG_LIST_OK, err);
    if (rc == ENG_LIST_OK)
        CHECK(strstr(text, "fmul <3 x float>") != NULL);
    free(text);
    text = NULL;
    rc = eng_compile_listing("vec.pk", vec_src, strlen(vec_src), "shared", ENG_LIST_LLVM, &text,
                             err, sizeof err);
    CHECK_MSG(rc == ENG_LIST_OK, err);
    if (rc == ENG_LIST_OK)
        CHECK(strstr(text, "fmul <2 x float>") != NULL);
    free(text);

    eng_field *dom = et_field(ctx, "v_dom", 3, ENG_F32, 0.0f);
    eng_field *a = et_field(ctx, "v_a", 3, ENG_VEC3, 0.5f);
    eng_field *o = et_field(ctx, "v_o", 3, ENG_VEC3, 0.0f);
    eng_field *sa = et_field(ctx, "v_sa", 3, ENG_F32, 0.5f);
    eng_field *sb = et_field(ctx, "v_sb", 3, ENG_F32, 0.5f);
    eng_field *so[3] = {et_field(ctx, "v_oa", 3, ENG_F32, 0.0f),
                        et_field(ctx, "v_ob", 3, ENG_F32, 0.0f),
                        et_field(ctx, "v_oc", 3, ENG_F32, 0.0f)};
    checker_fill(ctx, dom, 9, 1);
    checker_fill(ctx, sa, 0, 1);
    checker_fill(ctx, sb, 1, 1);
    checker_fill(ctx, a, 0, 3);
    eng_program *p = et_compile(ctx, vec_src);
    eng_arg va[4] = {et_f(dom), et_f(a), et_f(o), et_s(0.375)};
    eng_arg sh[7] = {et_f(dom), et_f(sa), et_f(sb), et_f(so[0]), et_f(so[1]), et_f(so[2]),
                     et_s(0.375)};
    if (et_run(ctx, p, "vblend", va, 4) || et_run(ctx, p, "shared", sh, 7))
        return;
    int bad = 0;
    FOR_ACTIVE(x, y, z) {
        for (int c = 0; c < 3; c++) {
            float want = blend(c, x, y, z, 0.375f), got = et_at(o, x, y, z, c);
            if (got != want && bad++ < 5)
                fprintf(stderr, "vblend %d (%d,%d,%d): %g, expected %g\n", c, x, y, z,
                        got, want);
        }
        float ua = (at_bg(0, x + 1, y, z, 0.5f) - pat(0, x, y, z)) * 0.375f;
        float want[3] = {fmaxf(pat(0, x, y, z) + ua, -1.5f) * 0.5f + 0.25f,
                         blend(1, x, y, z, 0.375f) * 0.5f + 0.25f, ua * ua};
        for (int q = 0; q < 3; q++) {
            float got = et_at(so[q], x, y, z, 0);
            if (got != want[q] && bad++ < 5)
                fprintf(stderr, "shared %d (%d,%d,%d): %g, expected %g\n", q, x, y, z,
                        got, want[q]);
        }
    }
    CHECK(bad == 0);
}

static void test_component_readback(void)
{
    eng_field *dom = et_field(ctx, "r_dom", 3, ENG_F32, 0.0f);
    eng_field *a = et_field(ctx, "r_a", 3, ENG_F32, 0.5f);
    eng_field *o = et_field(ctx, "r_o", 3, ENG_VEC3, 7.0f);
    checker_fill(ctx, dom, 9, 1);
    checker_fill(ctx, a, 0, 1);
    eng_program *p = et_compile(ctx, vec_src);
    eng_arg args[5] = {et_f(dom), et_f(a), et_f(o), et_s(0.25), et_s(0)};
    if (et_run(ctx, p, "readback", args, 5))
        return;
    int bad = 0;
    FOR_ACTIVE(x, y, z) {
        float ox = (pat(0, x, y, z) - 1.0f) * 0.25f + 1.0f;
        float want = (ox - 1.0f) * 0.25f + 1.0f, got = et_at(o, x, y, z, 1);
        if (got != want && bad++ < 5)
            fprintf(stderr, "readback (%d,%d,%d): %g, expected %g\n", x, y, z, got, want);
    }
    CHECK(bad == 0);
}

int main(void)
{
    /* lanes.c is what this tests: rows in vectors (row_vector.c, test_row_vector.c) would
     * take these bodies whole, eight cells at once */
    setenv("PLUME_ROWVEC", "0", 1);
    ctx = et_context(2);
    test_blend_values();
    test_blend_vectorized();
    test_store_then_read();
    test_vec_and_shared();
    test_component_readback();
    eng_destroy(ctx);
    CHECK_DONE();
}
