/* Task fusion. Tasks A (earlier) and B (later) become one task running A's body then B's body
 * in each iteration when:
 *   1. there is no path of length >= 2 between them (a task C on a path A -> C -> B could
 *      neither run before nor after the fused task);
 *   2. both are serial, or both range_for over the same constant range, or both struct_for
 *      over the same SNode and the same version of its list;
 *   3. (parallel tasks) on every state both touch and at least one writes, both accesses are
 *      UNIQUE with the same address function, or both ATOMIC with the same operation, or
 *      (masks) both LOOKUP: then iteration i of B touches only what iteration i of A touched
 *      (or commutes with it, or cannot tell the order apart);
 *   4. neither has side effects beyond its states.
 * Each round every task takes part in at most one fusion, so n fusible tasks need O(log n)
 * rounds and no task grows by a long chain at once (the bank caches the repeated pairs).
 * A task's partner is the nearest fusible later task of its own family (sfg_task_meta.family)
 * within the scan, else the nearest fusible one, in both cases one whose fusion the IR side
 * accepts (it declines, e.g., two heavy bodies sharing no work; asked while choosing, so the
 * choice does not depend on what earlier flushes tried).
 *
 * Reachability: the pending list is a topological order, so every path between two tasks runs
 * through tasks placed between them. Descendant sets are bitsets over a block of consecutive
 * tasks (exact for pairs inside the block); blocks shift by half a block every other round.
 * A pair (A, B) is free of long paths when B is not a descendant of A, or B is a direct
 * successor of A that no other successor of A reaches.
 *
 * Applying a round: pairs are chosen with disjoint position intervals [A, B] (interval
 * scheduling by earliest B, which keeps pairs short and many; pairs of one family first).
 * Inside an interval, the tasks that reach B go first, then the fused task, then the rest — a
 * valid order of the contracted graph, because no task between them is both reached from A and
 * reaching B. */
#include "engine/sfg/sfg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUSION_BLOCK 4096u
#define MATCH_MAX 256u /* argument slots compared; a task with more matches none */
#define DEFAULT_ROUNDS 64u
/* Same-group tasks examined per task per round. 256 before stop 23; 16 found the same fusions
 * in every bench (micro, maccormack, mgpcg, the smoke scene: equal task and fusion counts)
 * and took the smoke scene's optimizer time over 24 frames from 0.66 to 0.49 s: a partner
 * farther than that is almost always behind a longer path. */
#define DEFAULT_SCAN 16u

typedef struct fusion_round {
    sfg_graph *g;
    sfg_bank *bank;
    uint32_t fp, np;
    uint32_t blk_lo, blk_n, words; /* current block [blk_lo, blk_lo + blk_n) in positions */
    uint64_t *desc;                /* blk_n rows of `words` words */
    uint32_t *next_same;           /* next position in the same fusion group, or SFG_NONE */
    unsigned char *reaches_b;      /* interior task reaches its interval's B */
} fusion_round;

static int fusible_type(const sfg_task_meta *m) {
    if (m->flags & SFG_TASK_SIDE_EFFECTS)
        return 0;
    if (m->type == SFG_RANGE_FOR)
        return !(m->flags & SFG_TASK_DYNAMIC_RANGE);
    return m->type == SFG_SERIAL || m->type == SFG_STRUCT_FOR;
}

static inline int bit(const uint64_t *row, uint32_t j) { return (int)((row[j >> 6] >> (j & 63)) & 1u); }

static uint64_t *row_of(const fusion_round *r, uint32_t pos) {
    return r->desc + (size_t)(pos - r->blk_lo) * r->words;
}

/* Descendants inside the block, from the last task backwards (successors come later). */
static void closure(fusion_round *r) {
    const sfg_graph *g = r->g;
    memset(r->desc, 0, (size_t)r->blk_n * r->words * sizeof *r->desc);
    for (uint32_t p = r->blk_n; p-- > 0;) {
        uint32_t i = r->fp + r->blk_lo + p;
        uint64_t *row = r->desc + (size_t)p * r->words;
        for (uint32_t e = g->succ_start[i]; e < g->succ_start[i + 1]; e++) {
            uint32_t s = g->succ[e];
            if (s < r->fp + r->blk_lo || s >= r->fp + r->blk_lo + r->blk_n)
                continue;
            uint32_t ps = s - r->fp - r->blk_lo;
            row[ps >> 6] |= 1ull << (ps & 63);
            const uint64_t *srow = r->desc + (size_t)ps * r->words;
            for (uint32_t w = 0; w < r->words; w++)
                row[w] |= srow[w];
        }
    }
}

/* Criterion 1 for positions a < b inside the block. */
static int no_long_path(const fusion_round *r, uint32_t a, uint32_t b) {
    const uint64_t *ra = row_of(r, a);
    uint32_t rb = b - r->blk_lo;
    if (!bit(ra, rb))
        return 1;
    const sfg_graph *g = r->g;
    uint32_t i = r->fp + a, direct = 0;
    for (uint32_t e = g->succ_start[i]; e < g->succ_start[i + 1]; e++) {
        uint32_t s = g->succ[e] - r->fp;
        if (s == b)
            direct = 1;
        else if (s > a && s < b && s >= r->blk_lo && bit(row_of(r, s), rb))
            return 0;
    }
    return (int)direct;
}

/* Criterion 3. Accesses are sorted by state, so this is a merge. */
static int compatible_access(const sfg_task_meta *a, const sfg_task_meta *b) {
    if (a->type == SFG_SERIAL)
        return 1;
    uint32_t i = 0, j = 0;
    while (i < a->n_access && j < b->n_access) {
        const sfg_access *x = &a->access[i], *y = &b->access[j];
        if (x->state < y->state) {
            i++;
            continue;
        }
        if (y->state < x->state) {
            j++;
            continue;
        }
        i++;
        j++;
        if (!((x->flags | y->flags) & SFG_ACC_WRITE))
            continue;
        int unique = (x->flags & SFG_ACC_UNIQUE) && (y->flags & SFG_ACC_UNIQUE) && x->addr == y->addr;
        int atomic = (x->flags & SFG_ACC_ATOMIC) && (y->flags & SFG_ACC_ATOMIC) && x->op == y->op;
        int lookup = SFG_STATE_KIND(x->state) == SFG_MASK && (x->flags & y->flags & SFG_ACC_LOOKUP);
        if (!unique && !atomic && !lookup)
            return 0;
    }
    return 1;
}

/* Fusion groups: tasks that could share an iteration set. Keyed loosely (hashes of the range
 * or the list version); sfg_same_domain makes the exact check. */
static int build_groups(fusion_round *r) {
    sfg_graph *g = r->g;
    sfg_map last = {0};
    for (uint32_t p = r->np; p-- > 0;) {
        const sfg_node *n = &g->node[r->fp + p];
        const sfg_task_meta *m = n->meta;
        r->next_same[p] = SFG_NONE;
        if (!fusible_type(m))
            continue;
        uint64_t k0 = (uint64_t)m->type << 56, k1 = 0;
        if (m->type == SFG_RANGE_FOR) {
            k0 ^= sfg_mix64((uint64_t)m->begin);
            k1 = (uint64_t)m->end;
        } else if (m->type == SFG_STRUCT_FOR) {
            k0 ^= m->snode;
            uint32_t kl = sfg_meta_find(m, SFG_STATE(SFG_LIST, m->snode));
            k1 = kl == SFG_NONE ? UINT64_MAX : n->slot[kl].in_ver;
        }
        uint64_t v;
        if (sfg_map_get(&last, k0, k1, &v))
            r->next_same[p] = (uint32_t)v;
        if (sfg_map_put(&last, k0, k1, p)) {
            sfg_map_free(&last);
            return SFG_ENOMEM;
        }
    }
    sfg_map_free(&last);
    return SFG_OK;
}

static int fusible(const fusion_round *r, uint32_t a, uint32_t b) {
    const sfg_node *na = &r->g->node[r->fp + a], *nb = &r->g->node[r->fp + b];
    return sfg_same_domain(na, nb) && no_long_path(r, a, b) &&
           compatible_access(na->meta, nb->meta);
}

typedef struct pair {
    uint32_t a, b;
    int kin; /* b is of a's family */
} pair;

static int cmp_pair_end(const void *x, const void *y) {
    const pair *p = x, *q = y;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    return p->a < q->a ? -1 : p->a > q->a;
}

/* Which of b's argument slots hold the same bytes as one of a's (sfg_arg_match), in same[]. */
static sfg_arg_match arg_match(const sfg_bank *bank, const sfg_node *a, const sfg_node *b,
                               int32_t *same) {
    sfg_arg_match m = {0, same};
    size_t u = bank->ops.arg_unit;
    if (!u || !a->args_size || !b->args_size || b->args_size / u > MATCH_MAX)
        return m;
    uint32_t na = (uint32_t)(a->args_size / u), nb = (uint32_t)(b->args_size / u);
    for (uint32_t i = 0; i < nb; i++) {
        same[i] = -1;
        for (uint32_t j = 0; j < na && same[i] < 0; j++)
            if (!memcmp(a->args + (size_t)j * u, b->args + (size_t)i * u, u))
                same[i] = (int32_t)j;
    }
    m.n = nb;
    return m;
}

/* 1 when the IR side refuses to fuse a then b, 0 when it fuses them (the result is then
 * cached for apply()), negative on an error. The op runs here, not only in apply(): a choice
 * that depended on which pairs earlier flushes happened to try would pick different partners
 * flush after flush, and each new pair is a new task to compile (the smoke solver's advection
 * compiled a new fused task in each of its first frames). */
static int refused(fusion_round *r, uint32_t a, uint32_t b) {
    int32_t same[MATCH_MAX];
    const sfg_node *na = &r->g->node[r->fp + a], *nb = &r->g->node[r->fp + b];
    sfg_arg_match m = arg_match(r->bank, na, nb, same);
    sfg_ir out;
    int rc = sfg_bank_fuse(r->bank, na->ir, nb->ir, &m, &out);
    return rc == SFG_EOP ? 1 : rc ? -rc : 0;
}

static uint64_t family(const fusion_round *r, uint32_t pos) {
    return r->g->node[r->fp + pos].meta->family;
}

/* The first task after a in its fusion group, within the scan, that is fusible with a, of a's
 * family when `kin`, and accepted by the IR side; SFG_NONE when there is none. Sets *err on an
 * error. Relatives are looked for first, so a task's fusions with strangers are only asked
 * for when it has no relative to fuse with. */
static uint32_t partner(fusion_round *r, uint32_t a, uint32_t scan, int kin, int *err) {
    uint32_t hi = r->blk_lo + r->blk_n, tries = 0;
    uint64_t fam = family(r, a);
    for (uint32_t b = r->next_same[a]; b != SFG_NONE && b < hi && tries < scan;
         b = r->next_same[b], tries++) {
        if (kin && family(r, b) != fam)
            continue;
        if (!fusible(r, a, b))
            continue;
        int no = refused(r, a, b);
        if (no < 0) {
            *err = -no;
            return SFG_NONE;
        }
        if (!no)
            return b;
    }
    return SFG_NONE;
}

/* For each task of the block, its partner in the block (see the top of the file). */
static int find_pairs(fusion_round *r, uint32_t scan, pair **pairs, uint32_t *n_pairs,
                      uint32_t *cap_pairs) {
    uint32_t hi = r->blk_lo + r->blk_n;
    for (uint32_t a = r->blk_lo; a < hi; a++) {
        int err = 0, kin = family(r, a) != 0;
        uint32_t b = kin ? partner(r, a, scan, 1, &err) : SFG_NONE;
        if (b == SFG_NONE && !err) {
            kin = 0;
            b = partner(r, a, scan, 0, &err);
        }
        if (err)
            return err;
        if (b == SFG_NONE)
            continue;
        if (sfg_reserve((void **)pairs, cap_pairs, *n_pairs + 1, sizeof **pairs))
            return SFG_ENOMEM;
        (*pairs)[(*n_pairs)++] = (pair){a, b, kin};
    }
    return SFG_OK;
}

static int cmp_pair_start(const void *x, const void *y) {
    const pair *p = x, *q = y;
    return p->a < q->a ? -1 : p->a > q->a;
}

/* Picks disjoint intervals among this block's candidates — pairs of one family first, then
 * the others, each earliest end first — appending the winners to `chosen` in position order
 * and marking the interior tasks that reach B. */
static int choose(fusion_round *r, pair *cand, uint32_t n, pair **chosen, uint32_t *n_chosen,
                  uint32_t *cap_chosen) {
    if (!n)
        return SFG_OK;
    qsort(cand, n, sizeof *cand, cmp_pair_end);
    unsigned char *taken = calloc(r->blk_n, 1);
    if (!taken)
        return SFG_ENOMEM;
    uint32_t first = *n_chosen;
    for (int kin = 1; kin >= 0; kin--) {
        for (uint32_t c = 0; c < n; c++) {
            if (cand[c].kin != kin)
                continue;
            uint32_t x = cand[c].a;
            while (x <= cand[c].b && !taken[x - r->blk_lo])
                x++;
            if (x <= cand[c].b)
                continue; /* overlaps a chosen interval */
            if (sfg_reserve((void **)chosen, cap_chosen, *n_chosen + 1, sizeof **chosen)) {
                free(taken);
                return SFG_ENOMEM;
            }
            (*chosen)[(*n_chosen)++] = cand[c];
            memset(taken + (cand[c].a - r->blk_lo), 1, cand[c].b - cand[c].a + 1);
            uint32_t rb = cand[c].b - r->blk_lo;
            for (x = cand[c].a + 1; x < cand[c].b; x++)
                r->reaches_b[x] = (unsigned char)bit(row_of(r, x), rb);
        }
    }
    free(taken);
    qsort(*chosen + first, *n_chosen - first, sizeof **chosen, cmp_pair_start);
    return SFG_OK;
}

static int make_fused(sfg_queue *q, const sfg_node *a, const sfg_node *b, sfg_node *out,
                      int *ok) {
    sfg_ir ir;
    const sfg_task_meta *meta;
    *ok = 0;
    int32_t same[MATCH_MAX];
    sfg_arg_match m = arg_match(q->bank, a, b, same);
    int rc = sfg_bank_fuse(q->bank, a->ir, b->ir, &m, &ir);
    if (rc == SFG_EOP)
        return SFG_OK;
    if (rc || (rc = sfg_bank_meta(q->bank, ir, &meta)))
        return rc;
    if (meta->type != a->meta->type)
        return SFG_OK; /* not what fusion promises: keep the pair apart */
    size_t n_args = a->args_size + b->args_size;
    unsigned char *args = n_args ? malloc(n_args) : NULL;
    if (n_args && !args)
        return SFG_ENOMEM;
    if (a->args_size)
        memcpy(args, a->args, a->args_size);
    if (b->args_size)
        memcpy(args + a->args_size, b->args, b->args_size);
    /* "a+b", which profiles and dumps show; where it does not fit, what fits and "+..." */
    char name[SFG_NAME_MAX];
    if (snprintf(name, sizeof name, "%s+%s", a->name, b->name) >= (int)sizeof name)
        memcpy(name + sizeof name - 5, "+...", 5);
    sfg_tags tags;
    sfg_tags_merge(&tags, &a->tags, &b->tags);
    rc = sfg_node_init(out, ir, ir.hash, meta, args, n_args, name, &tags, ++q->g.next_serial);
    free(args);
    if (!rc)
        *ok = 1;
    return rc;
}

/* Builds the new pending order from the chosen pairs and swaps it in. */
static int apply(sfg_queue *q, fusion_round *r, const pair *chosen, uint32_t n_chosen,
                 uint32_t *n_fused, uint32_t *n_declined) {
    sfg_graph *g = r->g;
    uint32_t fp = r->fp, cap = fp + r->np;
    sfg_node *nn = malloc((size_t)cap * sizeof *nn);
    sfg_node *fused = n_chosen ? calloc(n_chosen, sizeof *fused) : NULL;
    int *ok = n_chosen ? calloc(n_chosen, sizeof *ok) : NULL;
    if (!nn || (n_chosen && (!fused || !ok))) {
        free(nn);
        free(fused);
        free(ok);
        return SFG_ENOMEM;
    }
    int rc = SFG_OK;
    for (uint32_t c = 0; c < n_chosen && !rc; c++)
        rc = make_fused(q, &g->node[fp + chosen[c].a], &g->node[fp + chosen[c].b], &fused[c],
                        &ok[c]);
    if (rc) {
        for (uint32_t c = 0; c < n_chosen; c++)
            if (ok[c])
                sfg_node_release(&fused[c]);
        free(nn);
        free(fused);
        free(ok);
        return rc;
    }
    memcpy(nn, g->node, (size_t)fp * sizeof *nn);
    uint32_t w = fp, c = 0;
    *n_fused = 0;
    *n_declined = 0;
    for (uint32_t k = 0; k < n_chosen; k++)
        *n_declined += !ok[k];
    for (uint32_t p = 0; p < r->np; p++) {
        while (c < n_chosen && chosen[c].a < p)
            c++;
        if (c < n_chosen && chosen[c].a == p && ok[c]) {
            uint32_t b = chosen[c].b;
            for (uint32_t x = p + 1; x < b; x++)
                if (r->reaches_b[x] == 1)
                    nn[w++] = g->node[fp + x];
            nn[w++] = fused[c];
            for (uint32_t x = p + 1; x < b; x++)
                if (r->reaches_b[x] != 1)
                    nn[w++] = g->node[fp + x];
            sfg_node_release(&g->node[fp + p]);
            sfg_node_release(&g->node[fp + b]);
            (*n_fused)++;
            p = b;
            continue;
        }
        nn[w++] = g->node[fp + p];
    }
    free(g->node);
    g->node = nn;
    g->n_node = w;
    g->cap_node = cap;
    free(fused);
    free(ok);
    return SFG_OK;
}

int sfg_pass_fusion(sfg_queue *q, int *changed) {
    sfg_graph *g = &q->g;
    uint32_t rounds = q->opt.max_fusion_rounds ? q->opt.max_fusion_rounds : DEFAULT_ROUNDS;
    uint32_t scan = q->opt.fusion_scan ? q->opt.fusion_scan : DEFAULT_SCAN;
    *changed = 0;
    int rc = SFG_OK;
    for (uint32_t round = 0; round < rounds && !rc; round++) {
        fusion_round r = {.g = g, .bank = q->bank, .fp = g->first_pending,
                          .np = sfg_graph_pending(g)};
        if (r.np < 2)
            break;
        uint32_t blk = r.np < FUSION_BLOCK ? r.np : FUSION_BLOCK;
        r.words = (blk + 63) / 64;
        r.desc = malloc((size_t)blk * r.words * sizeof *r.desc);
        r.next_same = malloc((size_t)r.np * sizeof *r.next_same);
        r.reaches_b = calloc(r.np, 1);
        pair *cand = NULL, *chosen = NULL;
        uint32_t n_cand = 0, cap_cand = 0, n_chosen = 0, cap_chosen = 0, n_fused = 0;
        uint32_t n_declined = 0;
        if (!r.desc || !r.next_same || !r.reaches_b)
            rc = SFG_ENOMEM;
        if (!rc)
            rc = build_groups(&r);
        /* blocks: [0, blk), [blk, 2 blk) ... shifted by blk/2 on odd rounds */
        uint32_t shift = (round & 1) && r.np > blk ? blk / 2 : 0;
        for (uint32_t lo = 0; !rc && lo < r.np;) {
            uint32_t len = lo == 0 && shift ? shift : blk;
            if (len > r.np - lo)
                len = r.np - lo;
            r.blk_lo = lo;
            r.blk_n = len;
            r.words = (len + 63) / 64;
            closure(&r);
            n_cand = 0;
            rc = find_pairs(&r, scan, &cand, &n_cand, &cap_cand);
            if (!rc)
                rc = choose(&r, cand, n_cand, &chosen, &n_chosen, &cap_chosen);
            lo += len;
        }
        if (!rc && n_chosen) {
            /* pairs were appended block by block, each block sorted by end: already in
             * position order, and apply() walks them in that order */
            rc = apply(q, &r, chosen, n_chosen, &n_fused, &n_declined);
        }
        free(r.desc);
        free(r.next_same);
        free(r.reaches_b);
        free(cand);
        free(chosen);
        if (rc)
            break;
        if (!n_fused) {
            if (n_declined)
                continue; /* the refused pairs are known now: partners further on next */
            break;
        }
        q->stats.tasks_fused += n_fused;
        *changed = 1;
        rc = sfg_graph_rebuild(g);
    }
    return rc;
}
