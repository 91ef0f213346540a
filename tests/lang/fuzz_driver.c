/* fuzz_driver.c — a deterministic stand-in for libFuzzer used by ctest: mutates a seed corpus
 * (the given .pk files, the ```plume blocks of given .md files, the standard library) with a
 * fixed-seed PRNG and feeds every mutant to LLVMFuzzerTestOneInput for a bounded number of
 * iterations or seconds. A crash or abort fails the test; the offending input is written to
 * fuzz-crash.pk in the working directory first (best effort, from the signal handler).
 *
 * usage: test_lang_fuzz [--seconds S] [--iterations N] [--seed X] FILE...
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/lang/lang.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_INPUT = 64 * 1024, MAX_POOL = 512 };

typedef struct blob {
    uint8_t *data;
    size_t size;
} blob;

static blob pool[MAX_POOL];
static size_t npool, nseeds;
static const uint8_t *volatile current;
static volatile size_t current_size;

static void on_crash(int sig) {
    int fd = open("fuzz-crash.pk", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0 && current) {
        ssize_t w = write(fd, (const void *)current, current_size);
        (void)w;
        close(fd);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}
static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static void add(const uint8_t *d, size_t n) {
    if (npool == MAX_POOL || n > MAX_INPUT)
        return;
    pool[npool].data = malloc(n ? n : 1);
    if (!pool[npool].data)
        return;
    memcpy(pool[npool].data, d, n);
    pool[npool].size = n;
    npool++;
}

static void add_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz: cannot read %s\n", path);
        return;
    }
    static uint8_t buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    size_t len = strlen(path);
    if (len > 3 && strcmp(path + len - 3, ".md") == 0) {
        const char *p = (const char *)buf;
        while ((p = strstr(p, "```plume")) != NULL) {
            const char *body = strchr(p, '\n');
            if (!body)
                break;
            body++;
            const char *end = strstr(body, "```");
            if (!end)
                break;
            add((const uint8_t *)body, (size_t)(end - body));
            p = end + 3;
        }
    } else {
        add(buf, n);
    }
}

static const char *const dict[] = {
    "kernel ", "func ", "const ", "for ", "static ", " in ", " .. ", "while ", "if ", "else ",
    "return ", "break;", "continue;", "field<f32>", "field<vec3, 2>", "field<i32, 0>", "f32 ",
    "i32 ", "u32 ", "i64 ", "f64 ", "vec3 ", "ivec3 ", "mat3 ", "bool ", "(", ")", "{", "}",
    "[", "]", "[]", ";", ",", ".", ".xyz", "+", "-", "*", "/", "%", "=", "+=", "min=", "max=",
    "==", "<", "<<", ">>", "&&", "||", "!", "~", "?", ":", "0", "1", "-1", "2147483648",
    "4294967295u", "1.5", "1e40", "0x7f", "I", "q", "x", "sample(", "vec3(", "ivec3(1,0,0)",
    "sqrt(", "min(", "clamp(", "is_active(", "activate(", "voxel_size(", "true", "false",
    "/*", "*/", "//", "\n", "\t", "\xc3\xa9", "\0",
};

/* One mutant of a random pool entry into out; returns its size. */
static size_t mutate(uint8_t *out) {
    const blob *b = &pool[below(npool)];
    size_t n = b->size < MAX_INPUT ? b->size : MAX_INPUT;
    memcpy(out, b->data, n);
    int rounds = 1 + (int)below(4);
    for (int r = 0; r < rounds; r++) {
        switch (below(9)) {
        case 0: /* flip a byte */
            if (n)
                out[below(n)] ^= (uint8_t)(1u << below(8));
            break;
        case 1: /* random byte */
            if (n)
                out[below(n)] = (uint8_t)rnd();
            break;
        case 2: { /* delete a range */
            if (!n)
                break;
            size_t at = below(n), len = 1 + below(n - at < 16 ? n - at : 16);
            memmove(out + at, out + at + len, n - at - len);
            n -= len;
            break;
        }
        case 3:
        case 4: { /* insert a dictionary token */
            const char *t = dict[below(sizeof dict / sizeof dict[0])];
            size_t tl = strlen(t) ? strlen(t) : 1, at = below(n + 1);
            if (n + tl > MAX_INPUT)
                break;
            memmove(out + at + tl, out + at, n - at);
            memcpy(out + at, t, tl);
            n += tl;
            break;
        }
        case 5: { /* duplicate a range */
            if (!n)
                break;
            size_t at = below(n), len = 1 + below(n - at < 64 ? n - at : 64), to = below(n + 1);
            if (n + len > MAX_INPUT)
                break;
            uint8_t tmp[64];
            memcpy(tmp, out + at, len);
            memmove(out + to + len, out + to, n - to);
            memcpy(out + to, tmp, len);
            n += len;
            break;
        }
        case 6: { /* splice with another entry */
            const blob *o = &pool[below(npool)];
            size_t cut = below(n + 1), from = below(o->size + 1);
            size_t tail = o->size - from;
            if (cut + tail > MAX_INPUT)
                tail = MAX_INPUT - cut;
            memcpy(out + cut, o->data + from, tail);
            n = cut + tail;
            break;
        }
        case 7: { /* repeat a short token many times: nesting and long-chain bombs */
            static const char *const rep[] = {"(", "-", "{", "if (true) ", "a+", "[", "!", ".x"};
            const char *t = rep[below(sizeof rep / sizeof rep[0])];
            size_t tl = strlen(t), times = 1 + below(400), at = below(n + 1);
            if (n + tl * times > MAX_INPUT)
                break;
            memmove(out + at + tl * times, out + at, n - at);
            for (size_t i = 0; i < times; i++)
                memcpy(out + at + i * tl, t, tl);
            n += tl * times;
            break;
        }
        default: /* truncate */
            n = below(n + 1);
            break;
        }
    }
    return n;
}

int main(int argc, char **argv) {
    double seconds = 10;
    long iterations = 200000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
            iterations = atol(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            rng_state = strtoull(argv[++i], NULL, 0) | 1;
        else
            add_file(argv[i]);
    }
    size_t slen = 0;
    const char *std = pk_stdlib_source(&slen);
    add((const uint8_t *)std, slen);
    add((const uint8_t *)"", 0);
    nseeds = npool;
    if (nseeds < 3) {
        fprintf(stderr, "fuzz: too few seeds (%zu)\n", nseeds);
        return 1;
    }
    signal(SIGSEGV, on_crash);
    signal(SIGABRT, on_crash);
    signal(SIGBUS, on_crash);
    signal(SIGFPE, on_crash);

    /* every seed as is first */
    for (size_t i = 0; i < nseeds; i++) {
        current = pool[i].data;
        current_size = pool[i].size;
        LLVMFuzzerTestOneInput(pool[i].data, pool[i].size);
    }
    static uint8_t buf[MAX_INPUT + 1];
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long done = 0, kept = 0;
    for (; done < iterations; done++) {
        if ((done & 63) == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) > seconds)
                break;
        }
        size_t n = mutate(buf);
        current = buf;
        current_size = n;
        LLVMFuzzerTestOneInput(buf, n);
        /* keep some mutants that still compile: they reach deeper into the checker */
        if ((done & 15) == 0 && npool < MAX_POOL) {
            pk_result *r = pk_compile("keep.pk", (const char *)buf, n, NULL);
            if (r && pk_result_ok(r)) {
                add(buf, n);
                kept++;
            }
            pk_result_free(r);
        }
    }
    current = NULL;
    printf("lang_fuzz: %zu seeds, %ld mutants, %ld kept, no crash\n", nseeds, done, kept);
    for (size_t i = 0; i < npool; i++)
        free(pool[i].data);
    return 0;
}
