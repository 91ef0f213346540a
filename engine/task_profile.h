/* task_profile.h — where a context's kernel time goes, task by task: PLUME_PROFILE=1 in the
 * environment makes the CPU executor time every task it runs (tasks are told apart by their name:
 * a kernel's, or "a+b" for a fused one, and list generations by their SNode), and prints the
 * table on stderr when the context's kernel runtime is freed. A developer's tool: the figures
 * include the pool's start-up and join, so small tasks look dearer than they are.
 * Owned by the context; only the context's thread calls it. */
#ifndef PLUME_ENGINE_TASK_PROFILE_H
#define PLUME_ENGINE_TASK_PROFILE_H

#include <stdint.h>
#include <stdio.h>

typedef struct task_profile_row {
    char *name;   /* owned */
    uint64_t runs;
    double seconds;
} task_profile_row;

typedef struct task_profile {
    int enabled;  /* from PLUME_PROFILE at task_profile_init */
    task_profile_row *rows;  /* open addressing by name, power-of-two capacity */
    uint32_t cap, count;
} task_profile;

void task_profile_init(task_profile *p);
/* Adds one run of `seconds` to the row named name. Out of memory drops the sample. */
void task_profile_add(task_profile *p, const char *name, double seconds);
/* The rows, dearest first, then the total; nothing when disabled or empty. */
void task_profile_print(const task_profile *p, FILE *out);
void task_profile_free(task_profile *p);

#endif
