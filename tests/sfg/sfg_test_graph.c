/* The graph itself: flow and dependency edges, versions, survivors across flushes, and the
 * topological order handed to the executor on random graphs. */
#include "tests/check.h"
#include "engine/sfg/sfg_internal.h"
#include "toy_ir.h"

#include <stdlib.h>
#include <string.h>

static const sfg_options no_passes = {.disabled_passes = SFG_PASS_ALL};

static const sfg_edge *find_edge(const toy_env *e, uint32_t from, uint32_t to) {
    for (uint32_t i = 0; i < e->ex.last_n_edges; i++)
        if (e->ex.last_edges[i].from == from && e->ex.last_edges[i].to == to)
            return &e->ex.last_edges[i];
    return NULL;
}

/* write x; read x write y; write x: RAW 0->1, WAW 0->2, WAR 1->2 and nothing else. */
static void test_edges(void) {
    toy_env e;
    CHECK(!toy_env_init(&e, &no_passes, 0, 0));
    CHECK_EQ(toy_launch(&e, TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(0, TA_INDEX, 0, 1)), NULL, "w"), 0);
    CHECK_EQ(toy_launch(&e, TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(1, TA_INDEX, 0, 0, TA_INDEX, 0, 0)),
                        NULL, "r"),
             0);
    CHECK_EQ(toy_launch(&e, TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(0, TA_INDEX, 0, 5)), NULL, "w2"), 0);
    CHECK_EQ(sfg_pending(e.q), 3);
    CHECK_EQ(sfg_flush(e.q), 0);
    CHECK_EQ(e.ex.last_n, 3);
    CHECK_EQ(e.ex.last_n_edges, 3);
    const sfg_edge *raw = find_edge(&e, 0, 1), *waw = find_edge(&e, 0, 2), *war = find_edge(&e, 1, 2);
    CHECK(raw && raw->kinds == SFG_EDGE_FLOW);
    CHECK(waw && waw->kinds == SFG_EDGE_FLOW);
    CHECK(war && war->kinds == SFG_EDGE_DEP);

    /* survivors: "r" owns y and "w2" owns x; "w" owns nothing any more */
    const sfg_graph *g = &e.q->g;
    CHECK_EQ(g->n_node, 3);
    CHECK_EQ(g->first_pending, 3);
    CHECK(!strcmp(g->node[1].name, "r") && !strcmp(g->node[2].name, "w2"));

    /* a new reader of x depends on the survivor, which is not relaunched: no edge in the batch */
    CHECK_EQ(toy_launch(&e, TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(2, TA_INDEX, 0, 0, TA_INDEX, 0, 0)),
                        NULL, "r2"),
             0);
    CHECK_EQ(sfg_flush(e.q), 0);
    CHECK_EQ(e.ex.last_n, 1);
    CHECK_EQ(e.ex.last_n_edges, 0);
    toy_env_free(&e);
}

/* Versions: the reader sees the version its writer produced; a read-modify-write reads the old
 * version and produces a new one. */
static void test_versions(void) {
    toy_env e;
    CHECK(!toy_env_init(&e, &no_passes, 0, 0));
    toy_launch(&e, TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(0, TA_INDEX, 0, 1)), NULL, "w");
    toy_launch(&e, TOY_RANGE_IR(0, TOY_N, 0, TS_ADDC(0, TA_INDEX, 0, 1)), NULL, "inc");
    toy_launch(&e, TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(1, TA_INDEX, 0, 0, TA_INDEX, 0, 0)), NULL, "r");
    sfg_graph *g = &e.q->g;
    CHECK_EQ(sfg_graph_rebuild(g), 0);
    uint32_t fp = g->first_pending;
    const sfg_node *w = &g->node[fp], *inc = &g->node[fp + 1], *r = &g->node[fp + 2];
    sfg_state x = SFG_STATE(SFG_VALUE, 0);
    uint32_t kw = sfg_meta_find(w->meta, x), ki = sfg_meta_find(inc->meta, x),
             kr = sfg_meta_find(r->meta, x);
    CHECK(kw != SFG_NONE && ki != SFG_NONE && kr != SFG_NONE);
    CHECK_EQ(w->slot[kw].in_ver, 0);
    CHECK_EQ(inc->slot[ki].in_ver, w->slot[kw].out_ver);
    CHECK(inc->slot[ki].out_ver > inc->slot[ki].in_ver);
    CHECK_EQ(r->slot[kr].in_ver, inc->slot[ki].out_ver);
    CHECK_EQ(r->slot[kr].in_owner, fp + 1);
    CHECK_EQ(w->slot[kw].n_readers, 1);
    CHECK_EQ(w->slot[kw].next_writer, fp + 1);
    CHECK_EQ(inc->slot[ki].n_readers, 1);
    CHECK_EQ(inc->slot[ki].next_writer, SFG_NONE);
    CHECK_EQ(sfg_flush(e.q), 0);
    toy_env_free(&e);
}

static uint32_t rng_next(uint32_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static toy_ir *random_task(uint32_t *s) {
    toy_stmt st[4];
    int n = 1 + (int)(rng_next(s) % 3);
    for (int k = 0; k < n; k++) {
        int f = (int)(rng_next(s) % 6), src = (int)(rng_next(s) % 7) - 1;
        int mode = (int)(rng_next(s) % 3), off = (int)(rng_next(s) % 3) - 1;
        switch (rng_next(s) % 4) {
        case 0: st[k] = TS_STORE(f, mode, off, (int)(rng_next(s) % 9)); break;
        case 1: st[k] = TS_COPY(f, TA_INDEX, 0, src, mode, off, 1); break;
        case 2: st[k] = TS_ADD(f, mode, off, src, TA_INDEX, 0, 2); break;
        default: st[k] = TS_ACT((int)(rng_next(s) % TOY_SNODES), mode, off); break;
        }
    }
    int kind = (int)(rng_next(s) % 8);
    if (kind == 0)
        return toy_new(TOY_SERIAL, 0, 0, 0, 0, st, n);
    if (kind == 1)
        return toy_new(TOY_LISTGEN, (int)(rng_next(s) % TOY_SNODES), 0, 0, 0, NULL, 0);
    if (kind == 2)
        return toy_new(TOY_STRUCT, (int)(rng_next(s) % TOY_SNODES), 0, 0, 0, st, n);
    return toy_new(TOY_RANGE, 0, 0, kind == 3 ? 16 : TOY_N, 0, st, n);
}

/* On random graphs, every edge goes forward in the batch and every pair of conflicting tasks is
 * ordered by a path of edges: with all passes off, and with all on. */
static void test_random_order(void) {
    for (int passes = 0; passes < 2; passes++)
        for (uint32_t seed = 1; seed <= 40; seed++) {
            sfg_options opt = {.disabled_passes = passes ? 0 : SFG_PASS_ALL};
            toy_env e;
            CHECK(!toy_env_init(&e, &opt, 0, 0));
            uint32_t s = seed * 7919u;
            int n = 20 + (int)(rng_next(&s) % 120);
            for (int i = 0; i < n; i++) {
                CHECK_EQ(toy_launch(&e, random_task(&s), NULL, "t"), 0);
                if (rng_next(&s) % 50 == 0)
                    CHECK_EQ(sfg_flush(e.q), 0);
            }
            CHECK_EQ(sfg_sync(e.q), 0);
            if (e.ex.bad_order || e.ex.missing_dep)
                fprintf(stderr, "seed %u passes %d: order %d missing %d\n", seed, passes,
                        e.ex.bad_order, e.ex.missing_dep);
            CHECK(!e.ex.bad_order);
            CHECK(!e.ex.missing_dep);
            if (!passes)
                CHECK_EQ(e.ex.tasks, (uint64_t)n);
            toy_env_free(&e);
        }
}

/* sfg_graph_number (what a memoized flush computes its key from) gives every pending access
 * the version, owner and produced version that a full rebuild gives it, on random graphs with
 * survivors from earlier flushes. */
static void test_number_matches_rebuild(void) {
    for (uint32_t seed = 1; seed <= 30; seed++) {
        toy_env e;
        CHECK(!toy_env_init(&e, &no_passes, 0, 0));
        uint32_t s = seed * 104729u;
        int n = 10 + (int)(rng_next(&s) % 100);
        for (int i = 0; i < n; i++) {
            CHECK_EQ(toy_launch(&e, random_task(&s), NULL, "t"), 0);
            if (rng_next(&s) % 20 == 0)
                CHECK_EQ(sfg_flush(e.q), 0);
        }
        sfg_graph *g = &e.q->g;
        CHECK_EQ(sfg_graph_number(g), 0);
        size_t n_slot = 0;
        for (uint32_t i = g->first_pending; i < g->n_node; i++)
            n_slot += g->node[i].meta->n_access;
        sfg_slot *seen = malloc((n_slot ? n_slot : 1) * sizeof *seen);
        CHECK(seen != NULL);
        size_t at = 0;
        for (uint32_t i = g->first_pending; i < g->n_node; i++)
            for (uint32_t k = 0; k < g->node[i].meta->n_access; k++)
                seen[at++] = g->node[i].slot[k];
        CHECK_EQ(sfg_graph_rebuild(g), 0);
        at = 0;
        int bad = 0;
        for (uint32_t i = g->first_pending; i < g->n_node; i++)
            for (uint32_t k = 0; k < g->node[i].meta->n_access; k++, at++) {
                const sfg_slot *a = &seen[at], *b = &g->node[i].slot[k];
                bad += a->in_ver != b->in_ver || a->in_owner != b->in_owner ||
                       a->out_ver != b->out_ver || a->rec != b->rec;
            }
        if (bad)
            fprintf(stderr, "seed %u: %d accesses numbered unlike the rebuild\n", seed, bad);
        CHECK_EQ(bad, 0);
        free(seen);
        CHECK_EQ(sfg_sync(e.q), 0);
        toy_env_free(&e);
    }
}

int main(void) {
    test_edges();
    test_versions();
    test_random_order();
    test_number_matches_rebuild();
    CHECK_DONE();
}
