/* Helpers shared by the runtime's files: atomics, spin locks, warp election, byte fills.
 *
 * Atomics: natively the __atomic builtins. clang in C mode for nvptx64 believes no atomic is
 * lock-free and turns __atomic_* loads, stores and RMWs into libcalls that do not exist on the
 * device, and LLVM 16's NVPTX backend cannot select acquire/release fences; so the device build
 * uses __sync read-modify-writes (full barriers, lowered to atom.*), volatile loads and stores
 * and membar.gl. */
#ifndef PLUME_SPARSE_RT_INTERNAL_H
#define PLUME_SPARSE_RT_INTERNAL_H

#include "sparse/runtime/runtime.h"

#define RT_INLINE static inline __attribute__((always_inline))

#ifdef __NVPTX__
RT_INLINE void rt_fence(void) { __nvvm_membar_gl(); }
#define RT_LOAD_ACQ(p) ({ __typeof__(*(p)) v_ = *(volatile __typeof__(*(p)) *)(p); rt_fence(); v_; })
#define RT_STORE_REL(p, v) do { rt_fence(); *(volatile __typeof__(*(p)) *)(p) = (v); } while (0)
#define RT_LOAD_RELAXED(p) (*(volatile __typeof__(*(p)) *)(p))
#define RT_FETCH_ADD(p, v) __sync_fetch_and_add((p), (v))
#define RT_FETCH_OR(p, v) __sync_fetch_and_or((p), (v))
#define RT_FETCH_AND(p, v) __sync_fetch_and_and((p), (v))
#define RT_CAS(p, expected, desired) __sync_bool_compare_and_swap((p), (expected), (desired))
#else
#define RT_LOAD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define RT_STORE_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define RT_LOAD_RELAXED(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define RT_FETCH_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)
#define RT_FETCH_OR(p, v) __atomic_fetch_or((p), (v), __ATOMIC_ACQ_REL)
#define RT_FETCH_AND(p, v) __atomic_fetch_and((p), (v), __ATOMIC_ACQ_REL)
RT_INLINE int rt_cas_u64(uint64_t *p, uint64_t e, uint64_t d)
{
    return __atomic_compare_exchange_n(p, &e, d, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
RT_INLINE int rt_cas_u32(uint32_t *p, uint32_t e, uint32_t d)
{
    return __atomic_compare_exchange_n(p, &e, d, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
RT_INLINE int rt_cas_i32(int32_t *p, int32_t e, int32_t d)
{
    return __atomic_compare_exchange_n(p, &e, d, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
#define RT_CAS(p, expected, desired)                                                       \
    _Generic((p), uint64_t *: rt_cas_u64, uint32_t *: rt_cas_u32, int32_t *: rt_cas_i32)(   \
        (p), (expected), (desired))
#endif

RT_INLINE void rt_pause(void)
{
#if defined(__x86_64__) && !defined(__NVPTX__)
    __builtin_ia32_pause();
#endif
}

RT_INLINE void rt_lock(uint32_t *lock)
{
    for (;;) {
        if (RT_LOAD_RELAXED(lock) == 0 && RT_CAS(lock, 0u, 1u))
            return;
        rt_pause();
    }
}

RT_INLINE void rt_unlock(uint32_t *lock) { RT_STORE_REL(lock, 0u); }

/* Warp election: of the lanes of a warp that reach this point with the same key, one (the lowest)
 * is the representative. Off the GPU every thread is its own representative. */
#ifdef __NVPTX__
RT_INLINE uint32_t rt_warp_active_mask(void)
{
    uint32_t m;
    __asm__ volatile("activemask.b32 %0;" : "=r"(m));
    return m;
}
RT_INLINE int rt_warp_elect(uint32_t mask, uint64_t key)
{
    uint32_t peers = (uint32_t)__nvvm_match_any_sync_i64(mask, key);
    return __nvvm_read_ptx_sreg_laneid() == __builtin_ctz(peers);
}
RT_INLINE void rt_warp_sync(uint32_t mask) { __nvvm_bar_warp_sync(mask); }
#else
RT_INLINE uint32_t rt_warp_active_mask(void) { return 1u; }
RT_INLINE int rt_warp_elect(uint32_t mask, uint64_t key)
{
    (void)mask;
    (void)key;
    return 1;
}
RT_INLINE void rt_warp_sync(uint32_t mask) { (void)mask; }
#endif

RT_INLINE void rt_zero(uint8_t *p, uint64_t n)
{
    /* Word stores where aligned: the cells handed out are 8-aligned, sizes multiples of 4. */
    uint64_t i = 0;
    if (((uintptr_t)p & 7u) == 0)
        for (; i + 8 <= n; i += 8)
            *(uint64_t *)(p + i) = 0;
    for (; i < n; i++)
        p[i] = 0;
}

RT_INLINE uint64_t rt_align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

RT_INLINE plm_rt_snode *rt_sn(plm_runtime *rt, int32_t id) { return &rt->snodes[id]; }

/* Pointer containers: [u32 num_active, u32 pad][u32 lock x n, padded to 8][uint8_t* x n]. */
RT_INLINE uint32_t *rt_num_active(uint8_t *c) { return (uint32_t *)c; }
RT_INLINE uint32_t *rt_pointer_locks(uint8_t *c) { return (uint32_t *)(c + 8); }
RT_INLINE uint8_t **rt_pointer_slots(const plm_rt_snode *s, uint8_t *c)
{
    return (uint8_t **)(c + s->header_bytes);
}
/* Bitmasked containers: [u32 num_active, u32 pad][u32 mask words, padded to 8][cells]. */
RT_INLINE uint32_t *rt_bitmask_words(uint8_t *c) { return (uint32_t *)(c + 8); }
/* Dynamic containers: [u32 lock, i32 n][uint8_t *head]; a chunk: [uint8_t *next][cells]. */
typedef struct rt_dyn_header {
    uint32_t lock;
    int32_t n;
    uint8_t *head;
} rt_dyn_header;

/* Content of cell i of container c of s when active, else NULL (a SoA leaf's cells all start at
 * its value arrays). Dynamic cells lie in a chunk chain: callers walk it themselves. Used by list
 * generation and by the host's list-free walk (sparse/walk.c). */
RT_INLINE uint8_t *rt_active_cell(const plm_rt_snode *s, uint8_t *c, int32_t i)
{
    uint8_t *data = c + s->header_bytes;
    uint64_t at = (s->is_leaf && s->soa) ? 0 : (uint64_t)i * s->cell_bytes;
    switch (s->kind) {
    case PLM_RT_POINTER: return rt_pointer_slots(s, c)[i];
    case PLM_RT_BITMASKED:
        return ((rt_bitmask_words(c)[i >> 5] >> (i & 31)) & 1u) ? data + at : NULL;
    default: return data + at;
    }
}

/* The list entry of cell i (content `cell`) of s inside a parent entry whose first voxel is
 * base (the parent's coordinate, plus s's coord_offset under the root). */
RT_INLINE void rt_list_entry(plm_rt_elem *e, const plm_rt_snode *s, const int32_t base[3],
                             uint8_t *cell, int32_t i)
{
    e->cell = cell;
    e->index = i;
    for (int a = 0; a < 3; a++) {
        int32_t cc = (int32_t)(((uint32_t)i >> s->index_shift[a]) & ((1u << s->axis_bits[a]) - 1u));
        e->coord[a] = base[a] + (int32_t)((uint32_t)cc << s->axis_shift[a]);
    }
}

/* Functions shared between files (not entry points; internal linkage in the bitcode is not
 * possible across files, so they carry the plm_rt__ prefix and stay out of the documented set). */
int plm_rt__list_touch(plm_runtime *rt, plm_rt_list *l, int32_t i, int32_t snode);
/* Sets cell i of a leaf with inline cells (data: the container's cells) to every placed field's
 * background, whatever it held. */
void plm_rt__reset_leaf_cell(plm_runtime *rt, int32_t snode, uint8_t *data, int32_t i);
void plm_rt__fill_content(plm_runtime *rt, int32_t snode, uint8_t *content);
void plm_rt__fill_container(plm_runtime *rt, int32_t snode, uint8_t *c);
void plm_rt__release_content(plm_runtime *rt, int32_t snode, uint8_t *content);
void plm_rt__release_container(plm_runtime *rt, int32_t snode, uint8_t *c);

#endif
