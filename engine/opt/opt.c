/* The optimizer's driver: the passes in a fixed order, repeated while a round changes
 * something (a few rounds at most: each pass is cheap and mostly finishes its own work in one
 * go; later rounds pick up what one pass opened for another, e.g. a forwarded constant that
 * now folds). Builds without NDEBUG verify the task after every pass that changed it. */
#include "engine/opt/opt_internal.h"

#include <stdio.h>
#include <string.h>

#define MAX_ROUNDS 4

typedef struct pass {
    uint32_t bit;
    const char *name;
    int (*run)(ir_task *t);
} pass;

static const pass passes[] = {
    {OPT_FOLD, "fold", opt_fold},
    {OPT_SIMPLIFY, "simplify", opt_simplify},
    {OPT_FORWARD, "forward", opt_forward},
    {OPT_CSE, "cse", opt_cse},
    {OPT_DCE, "dce", opt_dce},
    {OPT_DSE, "dse", opt_dse},
};

uint32_t opt_pass_bit(const char *name)
{
    for (size_t i = 0; name && i < sizeof passes / sizeof passes[0]; i++)
        if (strcmp(passes[i].name, name) == 0)
            return passes[i].bit;
    return 0;
}

int opt_run(ir_task *t, uint32_t disabled, opt_dump_fn dump, void *ud, char *err, size_t n)
{
    char dummy[8];
    if (!err || !n) {
        err = dummy;
        n = sizeof dummy;
    }
    if (!t) {
        snprintf(err, n, "opt: no task");
        return -1;
    }
    for (int round = 0; round < MAX_ROUNDS; round++) {
        int changed = 0;
        for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
            const pass *p = &passes[i];
            if (disabled & p->bit)
                continue;
            int r = p->run(t);
            if (r < 0) {
                snprintf(err, n, "opt '%s': %s: out of memory", t->name, p->name);
                return -1;
            }
            if (r == 0)
                continue;
            changed = 1;
#ifndef NDEBUG
            char why[512];
            if (ir_verify(t, why, sizeof why) != 0) {
                snprintf(err, n, "opt: pass %s broke the IR: %s", p->name, why);
                return -1;
            }
#endif
            if (dump)
                dump(p->name, t, ud);
        }
        if (!changed)
            break;
    }
    return 0;
}
