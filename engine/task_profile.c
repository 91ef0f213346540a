/* Per-task timing for PLUME_PROFILE=1 (task_profile.h). */
#include "engine/task_profile.h"

#include <stdlib.h>
#include <string.h>

void task_profile_init(task_profile *p)
{
    memset(p, 0, sizeof *p);
    const char *e = getenv("PLUME_PROFILE");
    p->enabled = e && *e && strcmp(e, "0") != 0;
}

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static task_profile_row *find_slot(task_profile_row *rows, uint32_t cap, const char *name)
{
    uint32_t i = (uint32_t)name_hash(name) & (cap - 1);
    while (rows[i].name && strcmp(rows[i].name, name) != 0)
        i = (i + 1) & (cap - 1);
    return &rows[i];
}

static int grow(task_profile *p)
{
    uint32_t cap = p->cap ? p->cap * 2 : 64;
    task_profile_row *rows = calloc(cap, sizeof *rows);
    if (!rows)
        return -1;
    for (uint32_t i = 0; i < p->cap; i++)
        if (p->rows[i].name)
            *find_slot(rows, cap, p->rows[i].name) = p->rows[i];
    free(p->rows);
    p->rows = rows;
    p->cap = cap;
    return 0;
}

void task_profile_add(task_profile *p, const char *name, double seconds)
{
    if (!p->enabled)
        return;
    if (!name)
        name = "?";
    if ((p->count + 1) * 2 > p->cap && grow(p) != 0)
        return;
    task_profile_row *r = find_slot(p->rows, p->cap, name);
    if (!r->name) {
        if (!(r->name = strdup(name)))
            return;
        p->count++;
    }
    r->runs++;
    r->seconds += seconds;
}

static int by_time(const void *a, const void *b)
{
    const task_profile_row *x = *(const task_profile_row *const *)a;
    const task_profile_row *y = *(const task_profile_row *const *)b;
    return x->seconds < y->seconds ? 1 : x->seconds > y->seconds ? -1 : strcmp(x->name, y->name);
}

void task_profile_print(const task_profile *p, FILE *out)
{
    if (!p->enabled || !p->count)
        return;
    const task_profile_row **order = malloc(p->count * sizeof *order);
    if (!order)
        return;
    uint32_t n = 0;
    double total = 0;
    for (uint32_t i = 0; i < p->cap; i++)
        if (p->rows[i].name) {
            order[n++] = &p->rows[i];
            total += p->rows[i].seconds;
        }
    qsort(order, n, sizeof *order, by_time);
    fprintf(out, "plume profile: %u tasks, %.1f ms in all\n%10s %8s %10s %6s  %s\n", n, total * 1e3,
            "ms", "runs", "us/run", "%", "task");
    for (uint32_t i = 0; i < n; i++)
        fprintf(out, "%10.2f %8llu %10.1f %6.1f  %s\n", order[i]->seconds * 1e3,
                (unsigned long long)order[i]->runs, order[i]->seconds * 1e6 / (double)order[i]->runs,
                total > 0 ? 100.0 * order[i]->seconds / total : 0.0, order[i]->name);
    free(order);
}

void task_profile_free(task_profile *p)
{
    for (uint32_t i = 0; i < p->cap; i++)
        free(p->rows[i].name);
    free(p->rows);
    memset(p, 0, sizeof *p);
}
