/* Randomized differential test: random race-free programs of toy kernels (stencils, stores,
 * reductions, activations, deactivations, struct-fors with and without fresh lists, serial
 * tasks with arguments) run eagerly and optimized — all passes, and each pass disabled in turn,
 * with parallel loops backwards in the optimized runs — and the worlds must be identical at
 * every sync. Runs a fixed set of seeds, bounded in time; prints the seed of any failure.
 * Usage: sfg_test_random [first_seed [count]]. */
#include "tests/check.h"
#include "toy_ir.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct rng {
    uint64_t s;
} rng;

static uint32_t next(rng *r) {
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(r->s >> 33);
}
static int pick(rng *r, int n) { return (int)(next(r) % (uint32_t)n); }

enum { R_NONE, R_READ, R_STORE, R_SHIFT, R_ADD };

/* One parallel task body whose iterations are independent: per field one role. */
static int parallel_body(rng *r, toy_stmt *st) {
    int role[TOY_FIELDS], shift = pick(r, 2) ? 1 : -1;
    for (int f = 0; f < TOY_FIELDS; f++) {
        role[f] = pick(r, 5);
        if (f == TOY_SCALAR && (role[f] == R_STORE || role[f] == R_SHIFT))
            role[f] = R_ADD;
    }
    int n = 0, want = 1 + pick(r, 3);
    for (int tries = 0; n < want && tries < 20; tries++) {
        int f = pick(r, TOY_FIELDS), g = pick(r, TOY_FIELDS);
        int gm = TA_INDEX, go = 0;
        if (role[g] == R_READ) {
            gm = pick(r, 3);
            go = pick(r, 3) - 1;
        } else if (role[g] != R_STORE) {
            g = -1;
        }
        int c = pick(r, 5);
        switch (role[f]) {
        case R_STORE: st[n++] = TS_COPY(f, TA_INDEX, 0, g, gm, go, c); break;
        case R_SHIFT: st[n++] = TS_STORE(f, TA_INDEX, shift, c); break;
        case R_ADD: {
            int m = pick(r, 3);
            st[n++] = TS_ADD(f, m, m == TA_INDEX ? pick(r, 3) - 1 : pick(r, 4), g, gm, go, c);
            break;
        }
        default: break;
        }
    }
    int sn = pick(r, TOY_SNODES);
    switch (pick(r, 6)) {
    case 0: st[n++] = TS_ACT(sn, pick(r, 3), pick(r, 3)); break;
    case 1: st[n++] = TS_DEACT(sn, TA_INDEX, 0); break;
    default: break;
    }
    return n;
}

static int serial_body(rng *r, toy_stmt *st, int n_args) {
    int n = 1 + pick(r, 3);
    for (int k = 0; k < n; k++) {
        int f = pick(r, TOY_FIELDS), g = pick(r, TOY_FIELDS + 1) - 1;
        int m = n_args && !pick(r, 4) ? TA_ARG : TA_CONST;
        int o = m == TA_ARG ? 0 : pick(r, TOY_N);
        switch (pick(r, 5)) {
        case 0: st[k] = TS_COPY(f, m, o, g, TA_CONST, pick(r, TOY_N), pick(r, 9)); break;
        case 1: st[k] = TS_ADD(f, m, o, g, TA_CONST, pick(r, TOY_N), 1); break;
        case 2: st[k] = TS_ACT(pick(r, TOY_SNODES), m, o); break;
        case 3: st[k] = TS_DEACT(pick(r, TOY_SNODES), m, o); break;
        default:
            st[k] = TS_STORE(f, m, o, pick(r, 9));
            if (n_args)
                st[k].arg = 0;
            break;
        }
    }
    return n;
}

static toy_ir *copy_ir(const toy_ir *ir) {
    return toy_new(ir->loop, ir->snode, ir->begin, ir->end, ir->n_args, ir->s, (int)ir->n);
}

typedef struct launch_rec {
    toy_ir *ir;
    int32_t args[1];
    int sync; /* 1: sync after it, 2: flush after it */
} launch_rec;

#define MAX_LAUNCH 400

/* A random program as a list of launches (IR owned by the list; copied for each run). */
static int make_program(uint64_t seed, launch_rec *out) {
    rng r = {seed * 0x9e3779b97f4a7c15ull + 1};
    int n = 0, kernels = 10 + pick(&r, 50);
    int kstart[64], kend[64];
    static const int ranges[3][2] = {{0, TOY_N}, {0, 16}, {8, 24}};
    for (int k = 0; k < kernels && n < MAX_LAUNCH - 4; k++) {
        toy_stmt st[8];
        int kind = pick(&r, 12);
        kstart[k] = n;
        if (kind >= 10 && k > 0) {
            /* launch an earlier kernel again: same IR, as real programs do every iteration */
            int j = pick(&r, k);
            for (int i = kstart[j]; i < kend[j] && n < MAX_LAUNCH - 1; i++) {
                out[n] = out[i];
                out[n].ir = copy_ir(out[i].ir);
                out[n++].sync = 0;
            }
        } else if (kind < 4) {
            int rg = pick(&r, 3), m = parallel_body(&r, st);
            out[n++] = (launch_rec){toy_new(TOY_RANGE, 0, ranges[rg][0], ranges[rg][1], 0, st, m), {0}, 0};
        } else if (kind < 8 || kind >= 10) {
            int sn = pick(&r, TOY_SNODES);
            if (pick(&r, 4)) {
                out[n++] = (launch_rec){toy_new(TOY_CLEAR, sn, 0, 0, 0, NULL, 0), {0}, 0};
                out[n++] = (launch_rec){toy_new(TOY_LISTGEN, sn, 0, 0, 0, NULL, 0), {0}, 0};
            }
            int m = parallel_body(&r, st);
            out[n++] = (launch_rec){toy_new(TOY_STRUCT, sn, 0, 0, 0, st, m), {0}, 0};
        } else {
            int na = pick(&r, 2), m = serial_body(&r, st, na);
            out[n++] = (launch_rec){toy_new(TOY_SERIAL, 0, 0, 0, na, st, m), {pick(&r, TOY_N)}, 0};
        }
        kend[k] = n;
        int s = pick(&r, 16);
        out[n - 1].sync = s == 0 ? 1 : s == 1 ? 2 : 0;
    }
    out[n - 1].sync = 1;
    return n;
}

/* Runs the program in one configuration; the eager reference advances in lockstep and the
 * worlds are compared at every sync and flush. Returns the number of mismatches. */
/* The two queues handed their executors the same batches so far, the last one alike. */
static int same_batches(const toy_env *a, const toy_env *b) {
    const toy_exec *x = &a->ex, *y = &b->ex;
    if (x->batches != y->batches || x->tasks != y->tasks)
        return 0;
    if (!x->batches)
        return 1;
    if (x->last_n != y->last_n || x->last_n_edges != y->last_n_edges)
        return 0;
    for (uint32_t i = 0; i < x->last_n && i < TOY_MAX_BATCH; i++)
        if (x->last_hash[i] != y->last_hash[i] || strcmp(x->last_name[i], y->last_name[i]))
            return 0;
    return !x->last_n_edges ||
           !memcmp(x->last_edges, y->last_edges, x->last_n_edges * sizeof *x->last_edges);
}

static int run(const launch_rec *prog, int n, const sfg_options *o, uint64_t seed, const char *what,
               uint64_t *launched, uint64_t *memoized) {
    sfg_options eager = {.eager = 1}, fresh = *o;
    /* with the memo on, a twin queue optimizes every flush afresh: each batch must be the same */
    fresh.no_memo = 1;
    int twin = !o->no_memo;
    toy_env ref, opt, nm;
    if (toy_env_init(&ref, &eager, 1, 0) || toy_env_init(&opt, o, 1, 1) ||
        toy_env_init(&nm, &fresh, 1, 1))
        return 1;
    toy_world_init(&ref.world, (uint32_t)seed);
    toy_world_init(&opt.world, (uint32_t)seed);
    toy_world_init(&nm.world, (uint32_t)seed);
    int bad = 0;
    rng r = {seed ^ 0x5851f42d4c957f2dull};
    /* the program runs twice, so that flushes repeat and the memo of their results is used */
    for (int j = 0; j < 2 * n && !bad; j++) {
        int i = j % n;
        int rc1 = toy_launch(&ref, copy_ir(prog[i].ir), prog[i].args, "t");
        int rc2 = toy_launch(&opt, copy_ir(prog[i].ir), prog[i].args, "t");
        if (twin && !rc2)
            rc2 = toy_launch(&nm, copy_ir(prog[i].ir), prog[i].args, "t");
        if (twin && !rc2 && !same_batches(&opt, &nm)) {
            fprintf(stderr, "seed %llu %s: launch %d: a memoized batch differs\n",
                    (unsigned long long)seed, what, i);
            bad = 1;
        }
        if (rc1 || rc2) {
            fprintf(stderr, "seed %llu %s: launch %d failed: %s\n", (unsigned long long)seed, what,
                    i, sfg_error(opt.q));
            bad = 1;
            break;
        }
        if (prog[i].sync) {
            int rc = prog[i].sync == 1 ? sfg_sync(opt.q) : sfg_flush(opt.q);
            if (twin && !rc)
                rc = prog[i].sync == 1 ? sfg_sync(nm.q) : sfg_flush(nm.q);
            if (twin && !rc && !same_batches(&opt, &nm)) {
                fprintf(stderr, "seed %llu %s: flush after launch %d: a memoized batch differs\n",
                        (unsigned long long)seed, what, i);
                bad = 1;
            }
            if (rc || memcmp(&ref.world, &opt.world, sizeof ref.world)) {
                fprintf(stderr, "seed %llu %s: worlds differ after launch %d (rc %d)\n",
                        (unsigned long long)seed, what, i, rc);
                bad = 1;
            }
            /* In the second run the host sometimes flips a cell of a mask after a sync (in
             * both worlds, telling the queue): lists and activations the passes, or a memo of
             * their results, relied on are stale from then on. */
            if (prog[i].sync == 1 && j >= n && next(&r) % 2 == 0) {
                int sn = pick(&r, TOY_SNODES), c = pick(&r, TOY_N);
                ref.world.mask[sn][c] ^= 1;
                opt.world.mask[sn][c] ^= 1;
                sfg_state s = SFG_STATE(SFG_MASK, (uint32_t)sn);
                nm.world.mask[sn][c] ^= 1;
                if (sfg_host_write(opt.q, &s, 1) || sfg_host_write(nm.q, &s, 1)) {
                    fprintf(stderr, "seed %llu %s: host write failed\n", (unsigned long long)seed,
                            what);
                    bad = 1;
                }
            }
        }
    }
    if (!bad && (opt.ex.bad_order || opt.ex.missing_dep || opt.world.overflow)) {
        fprintf(stderr, "seed %llu %s: batch order %d, missing dependency %d, overflow %d\n",
                (unsigned long long)seed, what, opt.ex.bad_order, opt.ex.missing_dep,
                opt.world.overflow);
        bad = 1;
    }
    *launched += sfg_get_stats(opt.q)->tasks_launched;
    *memoized += sfg_get_stats(opt.q)->flushes_memoized;
    toy_env_free(&ref);
    toy_env_free(&opt);
    toy_env_free(&nm);
    return bad;
}

int main(int argc, char **argv) {
    uint64_t first = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    uint64_t count = argc > 2 ? strtoull(argv[2], NULL, 10) : 1500;
    static launch_rec prog[MAX_LAUNCH];
    static const struct {
        uint32_t disabled;
        int no_memo;
        const char *name;
    } configs[] = {{0, 0, "all passes"},
                   {SFG_PASS_LISTGEN, 0, "no listgen"},
                   {SFG_PASS_DEMOTE, 0, "no demote"},
                   {SFG_PASS_FUSION, 0, "no fusion"},
                   {SFG_PASS_DSE, 0, "no dse"},
                   {0, 1, "no memo"}};
    enum { NCONF = sizeof configs / sizeof configs[0] };
    uint64_t launched[NCONF] = {0}, memoized[NCONF] = {0}, enqueued = 0, done = 0;
    clock_t t0 = clock();
    for (uint64_t seed = first; seed < first + count; seed++) {
        int n = make_program(seed, prog);
        enqueued += 2 * (uint64_t)n;
        uint64_t first_launched = 0;
        for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
            sfg_options o = {.disabled_passes = configs[c].disabled,
                             .flush_every = (uint32_t)(seed % 3 == 0 ? 7 + seed % 30 : 0),
                             .max_fusion_rounds = (uint32_t)(seed % 5 == 0 ? 1 : 0),
                             .no_memo = configs[c].no_memo};
            uint64_t before = launched[c];
            if (run(prog, n, &o, seed, configs[c].name, &launched[c], &memoized[c]))
                check_failures++;
            /* a memoized flush launches what the passes would have made of it */
            if (configs[c].no_memo && launched[c] - before != launched[0] - first_launched) {
                fprintf(stderr, "seed %llu: %llu tasks launched with the memo, %llu without\n",
                        (unsigned long long)seed,
                        (unsigned long long)(launched[0] - first_launched),
                        (unsigned long long)(launched[c] - before));
                check_failures++;
            }
            if (c == 0)
                first_launched = before;
        }
        for (int i = 0; i < n; i++)
            free(prog[i].ir);
        done++;
        /* keep CI time bounded (sanitizer builds are slower) */
        if ((double)(clock() - t0) / CLOCKS_PER_SEC > 20.0)
            break;
    }
    printf("%llu programs, %llu tasks enqueued; launched:", (unsigned long long)done,
           (unsigned long long)enqueued);
    for (size_t c = 0; c < NCONF; c++)
        printf(" %s %llu%s", configs[c].name, (unsigned long long)launched[c],
               c + 1 < NCONF ? "," : "\n");
    printf("flushes memoized: %llu with all passes\n", (unsigned long long)memoized[0]);
    /* the optimizer must actually do something on these programs, and the memo be used: over a
     * run long enough to repeat a flush (a rerun of a few seeds need not) */
    if (done >= 100) {
        CHECK(launched[0] < enqueued);
        CHECK(memoized[0] > 0);
    } else {
        printf("note: %llu programs: too few to require fewer launches and a memoized flush; "
               "those checks are skipped\n", (unsigned long long)done);
    }
    CHECK_EQ(memoized[NCONF - 1], 0);
    CHECK_DONE();
}
