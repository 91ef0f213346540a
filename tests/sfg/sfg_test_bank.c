/* The IR bank: IR by hash, duplicates freed, metadata computed once per hash, results of
 * fusion, demotion and store removal cached by input hashes (refusals too), foreign handles
 * rejected, everything freed at destroy. */
#include "tests/check.h"
#include "toy_ir.h"

#include <stdlib.h>

static toy_ir *store(int f, int c) { return TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(f, TA_INDEX, 0, c)); }

int main(void) {
    toy_counters cnt = {0};
    sfg_ir_ops ops = toy_ops(&cnt);
    sfg_bank *b = sfg_bank_create(&ops);
    CHECK(b != NULL);

    sfg_ir a, a2, c, d;
    CHECK_EQ(sfg_bank_intern(b, store(0, 1), &a), 0);
    CHECK_EQ(sfg_bank_intern(b, store(0, 1), &a2), 0); /* same content: the held one */
    CHECK(a.ir == a2.ir && a.hash == a2.hash);
    CHECK_EQ(cnt.frees, 1);
    CHECK_EQ(sfg_bank_intern(b, store(1, 1), &c), 0);
    CHECK(c.hash != a.hash);
    sfg_bank_stats st = sfg_bank_get_stats(b);
    CHECK_EQ(st.irs, 2);
    CHECK_EQ(st.interned, 3);

    const sfg_task_meta *m1, *m2;
    CHECK_EQ(sfg_bank_meta(b, a, &m1), 0);
    CHECK_EQ(sfg_bank_meta(b, a, &m2), 0);
    CHECK(m1 == m2);
    CHECK_EQ(cnt.metas, 1);
    CHECK_EQ(m1->type, SFG_RANGE_FOR);
    CHECK_EQ(m1->n_access, 1);
    CHECK_EQ(m1->access[0].state, SFG_STATE(SFG_VALUE, 0));
    CHECK(m1->access[0].flags & SFG_ACC_FULL);

    /* fusion: computed once, then from the cache */
    sfg_ir f1, f2;
    CHECK_EQ(sfg_bank_fuse(b, a, c, NULL, &f1), 0);
    CHECK_EQ(sfg_bank_fuse(b, a, c, NULL, &f2), 0);
    CHECK(f1.ir == f2.ir);
    CHECK_EQ(cnt.fuses, 1);
    CHECK_EQ(((const toy_ir *)f1.ir)->n, 2);
    /* a refusal (different loop kinds) is cached as well */
    CHECK_EQ(sfg_bank_intern(b, TOY_SERIAL_IR(0, TS_STORE(2, TA_CONST, 0, 1)), &d), 0);
    CHECK_EQ(sfg_bank_fuse(b, a, d, NULL, &f1), SFG_EOP);
    CHECK_EQ(sfg_bank_fuse(b, a, d, NULL, &f1), SFG_EOP);
    CHECK_EQ(cnt.fuses, 2);
    /* an argument pattern is part of the key: a match asks the op again (once); a pattern
     * where nothing matched is the same as none */
    int32_t one[1] = {0}, none[1] = {-1};
    sfg_arg_match m_one = {1, one}, m_none = {1, none};
    CHECK_EQ(sfg_bank_fuse(b, a, c, &m_one, &f1), 0);
    CHECK_EQ(sfg_bank_fuse(b, a, c, &m_one, &f1), 0);
    CHECK_EQ(cnt.fuses, 3);
    CHECK_EQ(sfg_bank_fuse(b, a, c, &m_none, &f1), 0);
    CHECK_EQ(cnt.fuses, 3);
    /* a refusal is kept per pattern too: another pattern asks the op again */
    CHECK_EQ(sfg_bank_fuse(b, a, d, &m_one, &f1), SFG_EOP);
    CHECK_EQ(cnt.fuses, 4);

    /* demotion and store removal */
    sfg_ir act, dm1, dm2, r1, r2;
    CHECK_EQ(sfg_bank_intern(b, TOY_RANGE_IR(0, TOY_N, 0, TS_ACT(1, TA_HALF, 0), TS_STORE(3, TA_INDEX, 0, 2)), &act), 0);
    CHECK_EQ(sfg_bank_demote(b, act, 1, &dm1), 0);
    CHECK_EQ(sfg_bank_demote(b, act, 1, &dm2), 0);
    CHECK(dm1.ir == dm2.ir);
    CHECK_EQ(cnt.demotes, 1);
    int empty = -1;
    CHECK_EQ(sfg_bank_remove_stores(b, dm1, SFG_STATE(SFG_VALUE, 3), &r1, &empty), 0);
    CHECK_EQ(empty, 1);
    empty = -1;
    CHECK_EQ(sfg_bank_remove_stores(b, dm1, SFG_STATE(SFG_VALUE, 3), &r2, &empty), 0);
    CHECK_EQ(empty, 1);
    CHECK(r1.ir == r2.ir);
    CHECK_EQ(sfg_bank_remove_stores(b, act, SFG_STATE(SFG_VALUE, 3), &r1, &empty), 0);
    CHECK_EQ(empty, 0); /* the activation stays */
    CHECK_EQ(cnt.removes, 2);
    /* declined: the field is loaded after the store */
    sfg_ir ld;
    CHECK_EQ(sfg_bank_intern(b, TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(4, TA_INDEX, 0, 1), TS_COPY(5, TA_INDEX, 0, 4, TA_INDEX, 0, 0)), &ld), 0);
    CHECK_EQ(sfg_bank_remove_stores(b, ld, SFG_STATE(SFG_VALUE, 4), &r1, &empty), SFG_EOP);
    st = sfg_bank_get_stats(b);
    CHECK(st.cache_hits >= 5);

    /* handles the bank does not hold */
    toy_ir *stray = store(6, 6);
    sfg_ir h = {.hash = 1234, .ir = stray};
    CHECK_EQ(sfg_bank_meta(b, h, &m1), SFG_EINVAL);
    CHECK_EQ(sfg_bank_fuse(b, a, h, NULL, &f1), SFG_EINVAL);
    CHECK(sfg_bank_error(b)[0] != 0);
    free(stray);
    CHECK_EQ(sfg_bank_intern(b, NULL, &h), SFG_EINVAL);

    /* missing ops: no bank */
    sfg_ir_ops bad = ops;
    bad.fuse = NULL;
    CHECK(sfg_bank_create(&bad) == NULL);

    int held = (int)sfg_bank_get_stats(b).irs, freed_before = cnt.frees;
    sfg_bank_destroy(b);
    CHECK_EQ(cnt.frees - freed_before, held);
    CHECK_DONE();
}
