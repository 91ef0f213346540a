/* After a memory budget overrun, the host can free memory and go on (sparse/walk.h).
 *  - A kernel that activates more than the budget pays for fails at the sync with ENG_ENOMEM.
 *    The blocks it did activate are then still found (eng_field_block_count), although no
 *    list can be made any more (the budget is spent); eng_field_clear frees them; a kernel
 *    that fits the budget then runs and gives its values, with no error.
 *  - The same for a field placed beside another in one tree, whose clear writes the
 *    background into its blocks instead of freeing them (the other field keeps them).
 * Before the walk, both clears found no block once the budget was spent: the first context
 * failed again at the second kernel, the second kept the kernel's values.
 *  - The budget is the context's: two fields that each fit it alone do not fit together (each
 *    tree had the whole budget to itself before, so a scene of 20 fields could take 20 times
 *    the budget), and a field declared when the budget is spent is refused. */
#include "engine_test.h"

static const char *src =
    "kernel seed(field<f32> x, i32 n) {\n"
    "    for (P in ivec3(0) .. ivec3(n)) { x[P] = f32(P.x + 2 * P.y + 3 * P.z); }\n"
    "}\n";

static eng_context *open_ctx(uint64_t budget)
{
    eng_options o = {2, budget};
    eng_context *ctx = eng_create(&o);
    if (!ctx) {
        fprintf(stderr, "eng_create: %s\n", eng_create_error());
        exit(1);
    }
    return ctx;
}

/* Launches seed over n^3 voxels of x and syncs: the sync's code. */
static int seed(eng_context *ctx, eng_program *p, eng_field *x, int n)
{
    eng_arg a[2];
    memset(a, 0, sizeof a);
    a[0].field = x;
    a[1].i[0] = n;
    int rc = eng_launch(ctx, eng_program_find(p, "seed"), a, 2);
    return rc != ENG_OK ? rc : eng_sync(ctx);
}

static void test_single(void)
{
    eng_context *ctx = open_ctx(1u << 20);
    eng_field *x = et_field(ctx, "x", 3, ENG_F32, 0.0f);
    eng_program *p = et_compile(ctx, src);
    if (!p)
        exit(1);
    /* 96^3 voxels of 4 bytes: 3.4 MiB of blocks against 1 MiB */
    CHECK(seed(ctx, p, x, 96) == ENG_ENOMEM);
    CHECK(strstr(eng_error(ctx), "budget") != NULL);
    uint64_t blocks = eng_field_block_count(x);
    CHECK(blocks > 0 && blocks < 12 * 12 * 12);
    eng_field_clear(ctx, x);
    CHECK(eng_field_block_count(x) == 0);
    /* 40^3 fits (125 blocks of 2 KiB): it runs, with no error, and its values are there */
    CHECK_OK(ctx, seed(ctx, p, x, 40));
    int32_t at[3] = {39, 1, 1}, out[3] = {40, 1, 1};
    CHECK(eng_field_read(x, at, 0) == 39.0f + 2.0f + 3.0f);
    CHECK(eng_field_read(x, out, 0) == 0.0f);
    CHECK(eng_field_block_count(x) == 125);
    eng_destroy(ctx);
}

static void test_group(void)
{
    eng_context *ctx = open_ctx(1u << 20);
    eng_field_desc d[2] = {et_desc("g_a", ENG_F32, "", 0.5, 1.0f),
                           et_desc("g_b", ENG_F32, "", 0.5, 2.0f)};
    eng_field *m[2];
    CHECK_OK(ctx, eng_field_declare_group(ctx, d, 2, m));
    eng_program *p = et_compile(ctx, src);
    if (!p)
        exit(1);
    CHECK(seed(ctx, p, m[0], 96) == ENG_ENOMEM);
    uint64_t voxels = eng_field_active_voxels(m[0]);
    CHECK(voxels > 0);
    /* the clear leaves the blocks (b lives there too) and writes a's background into them:
     * every active voxel of a then reads 1 */
    eng_field_clear(ctx, m[0]);
    CHECK_OK(ctx, eng_sync(ctx));
    CHECK(eng_field_active_voxels(m[0]) == voxels);
    CHECK(eng_field_reduce(m[0], ENG_REDUCE_SUM) == (double)voxels);
    eng_destroy(ctx);
}

static void test_shared(void)
{
    eng_context *ctx = open_ctx(4u << 20);
    eng_field *x = et_field(ctx, "x", 3, ENG_F32, 0.0f);
    eng_field *y = et_field(ctx, "y", 3, ENG_F32, 0.0f);
    eng_program *p = et_compile(ctx, src);
    if (!p)
        exit(1);
    /* 80^3 voxels: 1000 blocks of 2 KiB, about half the 4 MiB, in each field */
    CHECK_OK(ctx, seed(ctx, p, x, 80));
    CHECK(eng_field_block_count(x) == 1000);
    CHECK(seed(ctx, p, y, 80) == ENG_ENOMEM);
    CHECK(strstr(eng_error(ctx), "field 'y'") != NULL);
    CHECK(strstr(eng_error(ctx), "budget 4194304 bytes") != NULL);
    /* refused allocations charge nothing: the trees hold no more than the budget between
     * them, and no other tree keeps an error for the next sync */
    CHECK(eng_memory_bytes(ctx) <= (4u << 20));
    CHECK_OK(ctx, eng_sync(ctx));
    /* x's blocks are still there: launched again it writes them, allocating nothing */
    eng_field_clear(ctx, y);
    CHECK_OK(ctx, eng_sync(ctx));
    CHECK_OK(ctx, seed(ctx, p, x, 80));
    CHECK(eng_field_read(x, (int32_t[3]){79, 1, 1}, 0) == 79.0f + 2.0f + 3.0f);
    eng_destroy(ctx);

    /* the fixed part of trees alone: a budget that some trees' empty tables already spend
     * refuses the next declaration, naming the budget */
    ctx = open_ctx(256u << 10);
    int refused = 0;
    for (int i = 0; i < 64 && !refused; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%d", i);
        eng_field_desc d = et_desc(name, ENG_F32, "", 0.5, 0.0f);
        eng_field *f = NULL;
        if (eng_field_declare(ctx, &d, &f) != ENG_OK) {
            refused = 1;
            CHECK(strstr(eng_error(ctx), "memory budget exceeded") != NULL);
            CHECK(strstr(eng_error(ctx), "budget 262144 bytes") != NULL);
        }
    }
    CHECK(refused);
    eng_destroy(ctx);
}

int main(void)
{
    test_single();
    test_group();
    test_shared();
    if (!check_failures)
        printf("budget recovery: blocks found, cleared and reused after an overrun\n");
    return check_failures ? 1 : 0;
}
