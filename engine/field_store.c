/* Host-side storage of a field's active 8^3 blocks: an open-addressing hash map from block
 * coordinates to blocks. This is the host's view of a field; tasks will run on the sparse
 * runtime's trees once the kernel engine exists, and this file then becomes the bridge. */
#include "engine/engine_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct block {
    int32_t origin[3];
    uint64_t mask[8];
    float data[]; /* components * 512 */
} block;

struct eng_field {
    eng_field_desc desc;
    char *name;
    char *layout;
    int comps;
    block **slots; /* hash table, power-of-two capacity, NULL = empty, TOMB = deleted */
    uint64_t cap, count, used;
    uint64_t active_voxels;
};

static block tomb_storage;
#define TOMB (&tomb_storage)

static size_t block_bytes(int comps) { return sizeof(block) + (size_t)comps * 512 * sizeof(float); }

static uint64_t hash3(const int32_t o[3])
{
    uint64_t h = (uint64_t)(uint32_t)(o[0] >> 3) * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)(uint32_t)(o[1] >> 3) * 0xC2B2AE3D27D4EB4Full;
    h ^= (uint64_t)(uint32_t)(o[2] >> 3) * 0x165667B19E3779F9ull;
    return h ^ (h >> 29);
}

static int popcount_mask(const uint64_t m[8])
{
    int n = 0;
    for (int i = 0; i < 8; i++)
        n += __builtin_popcountll(m[i]);
    return n;
}

int eng_field_new(eng_context *ctx, const eng_field_desc *desc, eng_field **out)
{
    eng_field *f = calloc(1, sizeof *f);
    if (!f)
        return eng_fail(ctx, ENG_ENOMEM, "out of host memory");
    f->desc = *desc;
    f->name = strdup(desc->name);
    f->layout = strdup(desc->layout ? desc->layout : "");
    f->desc.name = f->name;
    f->desc.layout = f->layout;
    f->comps = desc->type == ENG_VEC3 ? 3 : 1;
    f->cap = 64;
    f->slots = calloc(f->cap, sizeof *f->slots);
    if (!f->name || !f->layout || !f->slots) {
        eng_field_free(f);
        return eng_fail(ctx, ENG_ENOMEM, "out of host memory");
    }
    *out = f;
    return ENG_OK;
}

void eng_field_free(eng_field *f)
{
    if (!f)
        return;
    for (uint64_t i = 0; f->slots && i < f->cap; i++)
        if (f->slots[i] && f->slots[i] != TOMB)
            free(f->slots[i]);
    free(f->slots);
    free(f->name);
    free(f->layout);
    free(f);
}

const eng_field_desc *eng_field_info(const eng_field *f) { return &f->desc; }
int eng_field_components(const eng_field *f) { return f->comps; }
uint64_t eng_field_block_count(eng_field *f) { return f->count; }
uint64_t eng_field_active_voxels(eng_field *f) { return f->active_voxels; }

/* Index of the block with origin o, or of the slot where it would be inserted (*found = 0). */
static uint64_t find_slot(const eng_field *f, const int32_t o[3], int *found)
{
    uint64_t m = f->cap - 1, i = hash3(o) & m, first_tomb = UINT64_MAX;
    for (;;) {
        const block *b = f->slots[i];
        if (!b) {
            *found = 0;
            return first_tomb != UINT64_MAX ? first_tomb : i;
        }
        if (b == TOMB) {
            if (first_tomb == UINT64_MAX)
                first_tomb = i;
        } else if (b->origin[0] == o[0] && b->origin[1] == o[1] && b->origin[2] == o[2]) {
            *found = 1;
            return i;
        }
        i = (i + 1) & m;
    }
}

static block *lookup(const eng_field *f, const int32_t o[3])
{
    int found;
    uint64_t i = find_slot(f, o, &found);
    return found ? f->slots[i] : NULL;
}

static int grow(eng_field *f)
{
    uint64_t ncap = f->count * 4 > f->cap ? f->cap * 2 : f->cap; /* rehash drops tombstones */
    block **old = f->slots;
    uint64_t ocap = f->cap;
    block **slots = calloc(ncap, sizeof *slots);
    if (!slots)
        return -1;
    f->slots = slots;
    f->cap = ncap;
    f->used = 0;
    for (uint64_t i = 0; i < ocap; i++) {
        if (old[i] && old[i] != TOMB) {
            int found;
            uint64_t j = find_slot(f, old[i]->origin, &found);
            f->slots[j] = old[i];
            f->used++;
        }
    }
    free(old);
    return 0;
}

static int aligned_origin(const int32_t o[3])
{
    return (o[0] & 7) == 0 && (o[1] & 7) == 0 && (o[2] & 7) == 0;
}

float *eng_field_block_data(eng_context *ctx, eng_field *f, const int32_t origin[3], int create)
{
    block *b = lookup(f, origin);
    if (!b && create) {
        size_t nb = block_bytes(f->comps);
        if (ctx->bytes + nb > ctx->budget) {
            eng_fail(ctx, ENG_ENOMEM,
                     "memory budget exceeded: field '%s' needs %zu more bytes, %llu of %llu in use",
                     f->name, nb, (unsigned long long)ctx->bytes, (unsigned long long)ctx->budget);
            return NULL;
        }
        if ((f->used + 1) * 2 > f->cap && grow(f) != 0) {
            eng_fail(ctx, ENG_ENOMEM, "out of host memory growing field '%s'", f->name);
            return NULL;
        }
        b = malloc(nb);
        if (!b) {
            eng_fail(ctx, ENG_ENOMEM, "out of host memory in field '%s'", f->name);
            return NULL;
        }
        memcpy(b->origin, origin, sizeof b->origin);
        memset(b->mask, 0xff, sizeof b->mask); /* activity is per block, as in the sparse runtime */
        f->active_voxels += 512;
        for (int c = 0; c < f->comps; c++)
            for (int i = 0; i < 512; i++)
                b->data[c * 512 + i] = f->desc.background[c];
        int found;
        uint64_t j = find_slot(f, origin, &found);
        if (!f->slots[j])
            f->used++;
        f->slots[j] = b;
        f->count++;
        ctx->bytes += nb;
    }
    if (!b)
        return NULL;
    return b->data;
}

int eng_field_write_block(eng_context *ctx, eng_field *f, const int32_t origin[3],
                          const float *values, const uint64_t *mask)
{
    if (!aligned_origin(origin))
        return eng_fail(ctx, ENG_EINVAL, "block origin (%d,%d,%d) is not a multiple of 8",
                        origin[0], origin[1], origin[2]);
    float *data = eng_field_block_data(ctx, f, origin, 1);
    if (!data)
        return ENG_ENOMEM;
    block *b = lookup(f, origin);
    memcpy(data, values, (size_t)f->comps * 512 * sizeof(float));
    f->active_voxels -= (uint64_t)popcount_mask(b->mask);
    if (mask) {
        memcpy(b->mask, mask, sizeof b->mask);
        /* Inactive voxels read as background, whatever the host passed for them. */
        for (int i = 0; i < 512; i++)
            if (!(mask[i >> 6] >> (i & 63) & 1))
                for (int c = 0; c < f->comps; c++)
                    data[c * 512 + i] = f->desc.background[c];
    } else {
        memset(b->mask, 0xff, sizeof b->mask);
    }
    f->active_voxels += (uint64_t)popcount_mask(b->mask);
    return ENG_OK;
}

int eng_field_read_block(eng_field *f, const int32_t origin[3], float *values, uint64_t *mask)
{
    block *b = aligned_origin(origin) ? lookup(f, origin) : NULL;
    if (b) {
        memcpy(values, b->data, (size_t)f->comps * 512 * sizeof(float));
        if (mask)
            memcpy(mask, b->mask, sizeof b->mask);
        return 1;
    }
    for (int c = 0; c < f->comps; c++)
        for (int i = 0; i < 512; i++)
            values[c * 512 + i] = f->desc.background[c];
    if (mask)
        memset(mask, 0, 8 * sizeof *mask);
    return 0;
}

float eng_field_read(eng_field *f, const int32_t ijk[3], int c)
{
    int32_t o[3] = {ijk[0] & ~7, ijk[1] & ~7, ijk[2] & ~7};
    block *b = lookup(f, o);
    if (!b)
        return f->desc.background[c];
    int i = (ijk[0] & 7) * 64 + (ijk[1] & 7) * 8 + (ijk[2] & 7);
    return b->data[c * 512 + i];
}

static int cmp_origin(const void *pa, const void *pb)
{
    const int32_t *a = pa, *b = pb;
    for (int k = 2; k >= 0; k--)
        if (a[k] != b[k])
            return a[k] < b[k] ? -1 : 1;
    return 0;
}

uint64_t eng_field_block_origins(eng_field *f, int32_t *origins, uint64_t cap)
{
    uint64_t n = 0;
    int32_t *all = malloc((size_t)(f->count ? f->count : 1) * 3 * sizeof *all);
    if (!all)
        return 0;
    for (uint64_t i = 0; i < f->cap; i++)
        if (f->slots[i] && f->slots[i] != TOMB) {
            memcpy(all + 3 * n, f->slots[i]->origin, 3 * sizeof *all);
            n++;
        }
    qsort(all, n, 3 * sizeof *all, cmp_origin);
    uint64_t k = n < cap ? n : cap;
    memcpy(origins, all, (size_t)k * 3 * sizeof *all);
    free(all);
    return k;
}

void eng_field_clear(eng_context *ctx, eng_field *f)
{
    for (uint64_t i = 0; i < f->cap; i++) {
        if (f->slots[i] && f->slots[i] != TOMB)
            free(f->slots[i]);
        f->slots[i] = NULL;
    }
    ctx->bytes -= f->count * block_bytes(f->comps);
    f->count = f->used = f->active_voxels = 0;
}
