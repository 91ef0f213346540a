/* The arena: one zero-filled region, bump-allocated with an atomic cursor, never freed piecemeal.
 * Also the error record, which the budget check feeds. */
#include "sparse/runtime/rt_internal.h"

static void record_error(plm_runtime *rt, uint32_t code, int32_t snode, uint64_t needed,
                         uint64_t budget)
{
    RT_FETCH_ADD(&rt->error_count, (int64_t)1);
    /* First error wins; its details are written by the winner only, then published. */
    if (RT_CAS(&rt->error, 0u, 0xffffffffu)) {
        rt->error_snode = snode;
        rt->error_needed = needed;
        rt->error_budget = budget;
        RT_STORE_REL(&rt->error, code);
        /* the first error raises it; later ones find it up (clearing lowers both) */
        if (rt->error_flag)
            RT_STORE_REL(rt->error_flag, 1u);
    }
}

void plm_rt_set_error(plm_runtime *rt, uint32_t code, int32_t snode, uint64_t needed)
{
    record_error(rt, code, snode, needed, rt->budget);
}

uint32_t plm_rt_error(const plm_runtime *rt)
{
    uint32_t e = RT_LOAD_ACQ(&rt->error);
    return e == 0xffffffffu ? (uint32_t)PLM_RT_ERR_BUDGET : e; /* being written: report it */
}

/* Takes `grow` bytes from the context's shared budget, only if it has them: a refused
 * allocation charges nothing, so failed attempts (after an overrun, many threads retry) cannot
 * push the count past what the trees really hold. */
static int charge_shared(plm_runtime *rt, uint64_t grow, int32_t snode)
{
    uint64_t cur = RT_LOAD_RELAXED(rt->shared_used);
    for (;;) {
        uint64_t want = cur + grow;
        if (want > rt->shared_budget || want < cur) {
            record_error(rt, PLM_RT_ERR_BUDGET, snode, want, rt->shared_budget);
            return 0;
        }
        if (RT_CAS(rt->shared_used, cur, want))
            return 1;
        cur = RT_LOAD_RELAXED(rt->shared_used);
    }
}

void *plm_rt_arena_alloc(plm_runtime *rt, uint64_t bytes, uint64_t align, int32_t snode)
{
    uint64_t old = RT_LOAD_RELAXED(&rt->used);
    for (;;) {
        uint64_t start = rt_align_up(old, align);
        uint64_t end = start + bytes;
        if (end > rt->budget || end < start) {
            plm_rt_set_error(rt, PLM_RT_ERR_BUDGET, snode, end);
            return NULL;
        }
        /* the shared budget first, so the cursor only moves for what was paid; handed back
         * when another thread moved the cursor first (the advance is then recomputed) */
        if (rt->shared_used && !charge_shared(rt, end - old, snode))
            return NULL;
        if (RT_CAS(&rt->used, old, end))
            return rt->arena + start;
        if (rt->shared_used)
            RT_FETCH_ADD(rt->shared_used, (uint64_t)0 - (end - old));
        old = RT_LOAD_RELAXED(&rt->used);
    }
}

uint64_t plm_rt_bytes_in_use(const plm_runtime *rt) { return RT_LOAD_RELAXED(&rt->used); }

void plm_rt_clear_error(plm_runtime *rt)
{
    for (int32_t s = 0; s < rt->num_snodes; s++) {
        plm_rt_snode *sn = &rt->snodes[s];
        if (sn->alloc.sink)
            rt_zero(sn->alloc.sink, sn->alloc_bytes);
    }
    rt_zero(rt->value_sink, 64);
    rt->error_snode = -1;
    rt->error_needed = 0;
    rt->error_budget = 0;
    rt->error_count = 0;
    RT_STORE_REL(&rt->error, 0u);
    if (rt->error_flag)
        RT_STORE_REL(rt->error_flag, 0u);
}

/* Freestanding formatting: append a string or an unsigned decimal to buf. */
static uint64_t put_str(char *buf, uint64_t len, uint64_t at, const char *s)
{
    for (; *s; s++, at++)
        if (at + 1 < len)
            buf[at] = *s;
    return at;
}

static uint64_t put_u64(char *buf, uint64_t len, uint64_t at, uint64_t v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n > 0) {
        if (at + 1 < len)
            buf[at] = tmp[n - 1];
        at++;
        n--;
    }
    return at;
}

uint32_t plm_rt_format_error(const plm_runtime *rt, char *buf, uint64_t len)
{
    uint32_t e = plm_rt_error(rt);
    uint64_t at = 0;
    if (e == PLM_RT_ERR_BUDGET) {
        at = put_str(buf, len, at, "memory budget exceeded: needed ");
        at = put_u64(buf, len, at, rt->error_needed);
        at = put_str(buf, len, at, " bytes, budget ");
        at = put_u64(buf, len, at, rt->error_budget ? rt->error_budget : rt->budget);
        at = put_str(buf, len, at, " bytes");
    } else if (e == PLM_RT_ERR_RANGE) {
        at = put_str(buf, len, at, "write outside the index range of SNode ");
        at = put_u64(buf, len, at, (uint64_t)(rt->error_snode < 0 ? 0 : rt->error_snode));
    } else if (e == PLM_RT_ERR_DYNAMIC) {
        at = put_str(buf, len, at, "append to a full dynamic SNode ");
        at = put_u64(buf, len, at, (uint64_t)(rt->error_snode < 0 ? 0 : rt->error_snode));
    } else if (e != PLM_RT_OK) {
        at = put_str(buf, len, at, "sparse runtime error ");
        at = put_u64(buf, len, at, e);
    }
    if (e != PLM_RT_OK && rt->error_count > 1) {
        at = put_str(buf, len, at, " (");
        at = put_u64(buf, len, at, (uint64_t)rt->error_count);
        at = put_str(buf, len, at, " failed operations)");
    }
    if (len > 0)
        buf[at < len ? at : len - 1] = 0;
    return e;
}
