#include "plugin/handles.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* Handle layout: bits 0..3 kind, 4..27 slot + 1, 28..63 generation. Slot 0 is never used, so a
 * valid handle is never 0 (NULL). */
#define KIND_BITS 4
#define SLOT_BITS 24
#define GEN_MASK ((1ull << (64 - KIND_BITS - SLOT_BITS)) - 1)

typedef struct slot {
    void *obj;
    uint64_t gen;
    handle_kind kind;
    uint32_t next_free;
} slot;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static slot *slots;
static uint32_t nslots, capslots, free_head, live;
/* Where a new table's generations start. A table freed at the last deinit and made again, or
 * the table of another copy of the library loaded beside this one, would otherwise hand out
 * the same values again, and a handle the host kept from before would find a stranger's
 * object. A random start makes such a match a 1 in 2^36 chance. */
static uint64_t gen_start;

static uint64_t random_start(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        v = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec ^
            ((uint64_t)getpid() << 20) ^ (uint64_t)(uintptr_t)&gen_start;
    }
    v &= GEN_MASK;
    return v ? v : 1;
}

static uintptr_t encode(handle_kind k, uint32_t s, uint64_t gen)
{
    return (uintptr_t)(((uint64_t)gen << (KIND_BITS + SLOT_BITS)) |
                       ((uint64_t)(s + 1) << KIND_BITS) | (uint64_t)k);
}

uintptr_t handle_new(handle_kind kind, void *obj)
{
    pthread_mutex_lock(&lock);
    uint32_t s;
    if (free_head) {
        s = free_head - 1;
        free_head = slots[s].next_free;
    } else {
        if (nslots + 1 >= (1u << SLOT_BITS) - 1) {
            pthread_mutex_unlock(&lock);
            return 0;
        }
        if (nslots == capslots) {
            uint32_t ncap = capslots ? capslots * 2 : 64;
            slot *grown = realloc(slots, ncap * sizeof *grown);
            if (!grown) {
                pthread_mutex_unlock(&lock);
                return 0;
            }
            slots = grown;
            capslots = ncap;
        }
        if (nslots == 0)
            gen_start = random_start();
        s = nslots++;
        slots[s].gen = gen_start;
    }
    slots[s].obj = obj;
    slots[s].kind = kind;
    slots[s].next_free = 0;
    live++;
    uintptr_t h = encode(kind, s, slots[s].gen & GEN_MASK);
    pthread_mutex_unlock(&lock);
    return h;
}

static int decode(uintptr_t h, handle_kind *k, uint32_t *s, uint64_t *gen)
{
    uint64_t v = (uint64_t)h;
    *k = (handle_kind)(v & ((1u << KIND_BITS) - 1));
    uint64_t s1 = (v >> KIND_BITS) & ((1u << SLOT_BITS) - 1);
    *gen = v >> (KIND_BITS + SLOT_BITS);
    if (s1 == 0)
        return 0;
    *s = (uint32_t)(s1 - 1);
    return 1;
}

void *handle_get(uintptr_t h, handle_kind kind)
{
    handle_kind k;
    uint32_t s;
    uint64_t gen;
    void *obj = NULL;
    if (!h || !decode(h, &k, &s, &gen) || k != kind)
        return NULL;
    pthread_mutex_lock(&lock);
    if (s < nslots && slots[s].obj && slots[s].kind == kind &&
        (slots[s].gen & GEN_MASK) == gen)
        obj = slots[s].obj;
    pthread_mutex_unlock(&lock);
    return obj;
}

void handle_drop(uintptr_t h)
{
    handle_kind k;
    uint32_t s;
    uint64_t gen;
    if (!h || !decode(h, &k, &s, &gen))
        return;
    pthread_mutex_lock(&lock);
    if (s < nslots && slots[s].obj &&
        (slots[s].gen & GEN_MASK) == gen) {
        slots[s].obj = NULL;
        slots[s].gen = (slots[s].gen + 1) & GEN_MASK;
        slots[s].next_free = free_head;
        free_head = s + 1;
        live--;
    }
    pthread_mutex_unlock(&lock);
}

void handle_table_release(void)
{
    pthread_mutex_lock(&lock);
    if (live == 0) {
        free(slots);
        slots = NULL;
        nslots = capslots = free_head = 0;
    }
    pthread_mutex_unlock(&lock);
}

uintptr_t handle_any(handle_kind kind)
{
    uintptr_t h = 0;
    pthread_mutex_lock(&lock);
    for (uint32_t s = 0; s < nslots && !h; s++)
        if (slots[s].obj && slots[s].kind == kind)
            h = encode(kind, s, slots[s].gen & GEN_MASK);
    pthread_mutex_unlock(&lock);
    return h;
}
