/* New cells read the field's background (docs/language.md: "reads background when inactive";
 * an activated or += updated cell starts from it), whatever the layout. Layouts whose
 * bitmasked node has no pointer above are allocated whole with the tree: their cells were
 * left at zero, so with background 2 `q[1,1,1] += 1.0` gave 1 and `activate` then a read gave
 * 0. A cleared field's cells start from the background again. An `activate` outside an
 * all-dense field's voxels is an error, as a write there is. Expected values: background + the
 * kernels' increments. */
#include "engine_test.h"

static eng_context *ctx;

static const float BG = 2.0f;

static void new_cells_start_at_background(const char *name, const char *layout)
{
    eng_field *q = et_field_layout(ctx, name, layout, ENG_F32, BG);
    eng_program *p = et_compile(ctx,
        "kernel bump(field<f32> q) { for (P in ivec3(1) .. ivec3(2)) { q[P] += 1.0; } }\n"
        "kernel touch(field<f32> q) { for (P in ivec3(2) .. ivec3(3)) { activate(q, P); } }\n"
        "kernel drop(field<f32> q) { for (P in ivec3(1) .. ivec3(2)) { deactivate(q, P); } }\n");
    eng_arg a[1] = {et_f(q)};
    if (!q || !p || et_run(ctx, p, "bump", a, 1) || et_run(ctx, p, "touch", a, 1))
        return;
    float bumped = et_at(q, 1, 1, 1, 0), touched = et_at(q, 2, 2, 2, 0);
    if (bumped != BG + 1.0f || touched != BG)
        fprintf(stderr, "%s: q[1,1,1] %g (want %g), activated q[2,2,2] %g (want %g)\n", layout,
                (double)bumped, (double)(BG + 1.0f), (double)touched, (double)BG);
    CHECK(bumped == BG + 1.0f);
    CHECK(touched == BG);
    /* deactivated, then updated again: from the background, not from what the cell held */
    if (et_run(ctx, p, "drop", a, 1) || et_run(ctx, p, "bump", a, 1))
        return;
    CHECK(et_at(q, 1, 1, 1, 0) == BG + 1.0f);
    /* cleared by the host (as a VDB import or a checkpoint restore does first) */
    eng_field_clear(ctx, q);
    if (et_run(ctx, p, "bump", a, 1))
        return;
    float after_clear = et_at(q, 1, 1, 1, 0);
    if (after_clear != BG + 1.0f)
        fprintf(stderr, "%s after clear: q[1,1,1] %g (want %g)\n", layout, (double)after_clear,
                (double)(BG + 1.0f));
    CHECK(after_clear == BG + 1.0f);
}

static void activate_outside_dense(void)
{
    eng_field *q = et_field_layout(ctx, "qd", "dense(ijk,16)", ENG_F32, BG);
    eng_program *p = et_compile(ctx,
        "kernel poke(field<f32> q) { for (P in ivec3(20, 0, 0) .. ivec3(21, 1, 1)) { activate(q, P); } }\n");
    eng_arg a[1] = {et_f(q)};
    eng_kernel *k = p ? eng_program_find(p, "poke") : NULL;
    if (!q || !k)
        return;
    int rc = eng_launch(ctx, k, a, 1);
    if (rc == ENG_OK)
        rc = eng_sync(ctx);
    if (rc == ENG_OK)
        fprintf(stderr, "activate outside dense(ijk,16) gave no error\n");
    CHECK(rc != ENG_OK && strstr(eng_error(ctx), "kernel 'poke' wrote outside the voxels the field can hold"));
}

int main(void)
{
    ctx = et_context(2);
    new_cells_start_at_background("q1", "bitmasked(ijk,16)");
    new_cells_start_at_background("q2", "offset(-4).bitmasked(ijk,2).dense(ijk,4)");
    new_cells_start_at_background("q3", "dense(ijk,2).bitmasked(ijk,8)");
    new_cells_start_at_background("q4", "bitmasked(ijk,2).bitmasked(ijk,4)");
    /* under a pointer (right before; kept as the reference case) */
    new_cells_start_at_background("q5", "pointer(ijk,2).bitmasked(ijk,8)");
    new_cells_start_at_background("q6", "pointer(ijk,4).dense(ijk,4)");
    activate_outside_dense();
    eng_destroy(ctx);
    CHECK_DONE();
}
