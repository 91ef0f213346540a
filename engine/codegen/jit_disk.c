/* Compiled objects on disk between processes (jit_disk.h). */
#define _GNU_SOURCE
#include "engine/codegen/jit_disk.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#define DISK_MAGIC "PLUMEOBJ"
#define DISK_VERSION 1u
#define DISK_MAX_OBJECT (256u << 20)

typedef struct disk_header {
    char magic[8];
    uint32_t version, pad;
    uint64_t name, instructions, size, checksum;
} disk_header;

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 31);
}

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = mix(h, w);
    }
    uint64_t tail = 0;
    if (n > i)
        memcpy(&tail, b + i, n - i);
    return mix(mix(h, tail), n);
}

static uint64_t hash_str(uint64_t h, const char *s) { return hash_bytes(h, s, s ? strlen(s) : 0); }

/* The contents of the binary (shared object or executable) this function lives in. */
static int hash_own_binary(uint64_t *out)
{
    Dl_info info;
    if (!dladdr((void *)hash_own_binary, &info) || !info.dli_fname)
        return -1;
    FILE *f = fopen(info.dli_fname, "rb");
    if (!f)
        return -1;
    static unsigned char buf[1 << 16];
    uint64_t h = 0x706c756d65ull;
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        h = hash_bytes(h, buf, n);
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return -1;
    *out = h;
    return 0;
}

char *jit_disk_default_dir(void)
{
    const char *e = getenv("PLUME_KERNEL_CACHE");
    if (e)
        return !e[0] || !strcmp(e, "off") ? NULL : strdup(e);
    char *p = NULL;
    const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (x && x[0] == '/') {
        if (asprintf(&p, "%s/plume/kernels", x) < 0)
            p = NULL;
    } else if (home && home[0]) {
        if (asprintf(&p, "%s/.cache/plume/kernels", home) < 0)
            p = NULL;
    }
    return p;
}

int jit_disk_open(jit_disk *d, const char *dir, const char *cpu, const char *features,
                  int opt_level, const void *runtime_bc, size_t runtime_bc_size)
{
    d->dir = NULL;
    d->ident = 0;
    if (!dir || !dir[0])
        return 0;
    /* the binary is read once per process; several contexts may create JITs at once */
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static int done = 0, ok = 0;
    static uint64_t binary = 0;
    pthread_mutex_lock(&lock);
    if (!done) {
        ok = hash_own_binary(&binary) == 0;
        done = 1;
    }
    pthread_mutex_unlock(&lock);
    if (!ok)
        return 0;
    unsigned major = 0, minor = 0, patch = 0;
    LLVMGetVersion(&major, &minor, &patch);
    char *host_cpu = cpu ? NULL : LLVMGetHostCPUName();
    char *host_features = features ? NULL : LLVMGetHostCPUFeatures();
    uint64_t h = mix(binary, DISK_VERSION);
    h = mix(mix(mix(h, major), minor), patch);
    h = hash_str(h, cpu ? cpu : host_cpu);
    h = hash_str(h, features ? features : host_features);
    h = mix(h, (uint64_t)opt_level);
    h = hash_bytes(h, runtime_bc, runtime_bc ? runtime_bc_size : 0);
    /* switches that change the code made (row_vector.c) */
    const char *rows = getenv("PLUME_ROWVEC");
    h = hash_str(h, rows && !strcmp(rows, "0") ? "rows off" : "rows on");
    LLVMDisposeMessage(host_cpu);
    LLVMDisposeMessage(host_features);
    d->dir = strdup(dir);
    d->ident = h;
    /* Each build and CPU makes files of its own: keep the folder under its limit, once per
     * process (a scan of the folder) */
    static int pruned = 0;
    pthread_mutex_lock(&lock);
    if (!pruned && d->dir) {
        pruned = 1;
        uint64_t max = jit_disk_max_bytes();
        if (max && jit_disk_prune_due(d->dir))
            jit_disk_prune(d->dir, max);
    }
    pthread_mutex_unlock(&lock);
    return d->dir != NULL;
}

void jit_disk_close(jit_disk *d)
{
    free(d->dir);
    d->dir = NULL;
}

uint64_t jit_disk_name(const jit_disk *d, uint64_t key, char *const *syms, int n_syms)
{
    uint64_t h = mix(d->ident, key);
    for (int i = 0; i < n_syms; i++)
        h = hash_str(h, syms[i]);
    return mix(h, (uint64_t)n_syms);
}

static void path_of(const jit_disk *d, uint64_t name, char *out, size_t size)
{
    snprintf(out, size, "%s/%016" PRIx64 ".o", d->dir, name);
}

int jit_disk_load(const jit_disk *d, uint64_t name, void **bytes, size_t *size,
                  uint64_t *instructions)
{
    if (!d->dir)
        return 0;
    char path[4200];
    path_of(d, name, path, sizeof path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    disk_header hd;
    void *buf = NULL;
    int ok = fread(&hd, sizeof hd, 1, f) == 1 && !memcmp(hd.magic, DISK_MAGIC, 8) &&
             hd.version == DISK_VERSION && hd.name == name && hd.size > 0 &&
             hd.size <= DISK_MAX_OBJECT && (buf = malloc(hd.size)) != NULL &&
             fread(buf, 1, hd.size, f) == hd.size && fgetc(f) == EOF &&
             hash_bytes(name, buf, hd.size) == hd.checksum;
    if (ok)
        futimens(fileno(f), NULL); /* used now: pruning removes the least recently used first */
    fclose(f);
    if (!ok) {
        free(buf);
        return 0;
    }
    *bytes = buf;
    *size = hd.size;
    *instructions = hd.instructions;
    return 1;
}

/* mkdir -p; errors show up when the file cannot be created */
static void make_dirs(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        mkdir(p, 0755);
        *s = '/';
    }
    mkdir(p, 0755);
}

/* Once per process: a cache that cannot be written costs every later cook its compile time,
 * which nobody would guess from a cook that otherwise works. */
static void warn_unwritable(const char *dir, int err)
{
    static _Atomic int warned;
    if (!warned++)
        fprintf(stderr, "plume: the kernel cache %s cannot be written (%s): kernels not stored "
                        "there will be compiled again by every cook (PLUME_KERNEL_CACHE names "
                        "another folder, or off)\n", dir, strerror(err));
}

void jit_disk_store(const jit_disk *d, uint64_t name, const void *bytes, size_t size,
                    uint64_t instructions)
{
    if (!d->dir || !size || size > DISK_MAX_OBJECT)
        return;
    char path[4200], tmp[4200];
    path_of(d, name, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s/.%016" PRIx64 ".XXXXXX", d->dir, name);
    int fd = mkstemp(tmp);
    if (fd < 0 && errno == ENOENT) {
        make_dirs(d->dir);
        /* a failed mkstemp may have filled in the X's */
        snprintf(tmp, sizeof tmp, "%s/.%016" PRIx64 ".XXXXXX", d->dir, name);
        fd = mkstemp(tmp);
    }
    if (fd < 0) {
        warn_unwritable(d->dir, errno);
        return;
    }
    disk_header hd;
    memset(&hd, 0, sizeof hd);
    memcpy(hd.magic, DISK_MAGIC, 8);
    hd.version = DISK_VERSION;
    hd.name = name;
    hd.instructions = instructions;
    hd.size = size;
    hd.checksum = hash_bytes(name, bytes, size);
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        unlink(tmp);
        return;
    }
    int ok = fwrite(&hd, sizeof hd, 1, f) == 1 && fwrite(bytes, 1, size, f) == size;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        warn_unwritable(d->dir, errno ? errno : EIO);
        unlink(tmp);
    }
}

/* ---- pruning ---- */

typedef struct cache_file {
    char name[32];
    uint64_t bytes;
    struct timespec used;
} cache_file;

static int older_first(const void *pa, const void *pb)
{
    const cache_file *a = pa, *b = pb;
    if (a->used.tv_sec != b->used.tv_sec)
        return a->used.tv_sec < b->used.tv_sec ? -1 : 1;
    if (a->used.tv_nsec != b->used.tv_nsec)
        return a->used.tv_nsec < b->used.tv_nsec ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int hex16(const char *n)
{
    for (int i = 0; i < 16; i++)
        if (!((n[i] >= '0' && n[i] <= '9') || (n[i] >= 'a' && n[i] <= 'f')))
            return 0;
    return 1;
}

/* This cache's object names: 16 hex digits and ".o" */
static int is_object_name(const char *n) { return strlen(n) == 18 && hex16(n) && !strcmp(n + 16, ".o"); }

/* jit_disk_store's temporary names: "." 16 hex digits "." and mkstemp's 6 characters */
static int is_temp_name(const char *n) { return strlen(n) == 24 && n[0] == '.' && hex16(n + 1) && n[17] == '.'; }

uint64_t jit_disk_prune(const char *dir, uint64_t max_bytes)
{
    if (!dir || !max_bytes)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    cache_file *files = NULL;
    size_t n = 0, cap = 0;
    uint64_t total = 0, removed = 0;
    time_t now = time(NULL);
    struct dirent *e;
    char path[4400];
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (is_temp_name(e->d_name) && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
            now - st.st_mtime > 3600) {
            /* a temporary file an interrupted store left an hour ago or more */
            if (unlink(path) == 0)
                removed += (uint64_t)st.st_size;
            continue;
        }
        if (!is_object_name(e->d_name) || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (n == cap) {
            size_t c = cap ? 2 * cap : 256;
            cache_file *g = realloc(files, c * sizeof *g);
            if (!g)
                break;
            files = g;
            cap = c;
        }
        snprintf(files[n].name, sizeof files[n].name, "%s", e->d_name);
        files[n].bytes = (uint64_t)st.st_size;
        files[n].used = st.st_mtim;
        total += files[n].bytes;
        n++;
    }
    closedir(d);
    if (total > max_bytes) {
        /* down to three quarters of the limit, so that pruning does not run on every store */
        uint64_t target = max_bytes / 4 * 3;
        qsort(files, n, sizeof *files, older_first);
        for (size_t i = 0; i < n && total > target; i++) {
            snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
            if (unlink(path) == 0) {
                total -= files[i].bytes;
                removed += files[i].bytes;
            }
        }
    }
    free(files);
    return removed;
}

int jit_disk_prune_due(const char *dir)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, JIT_DISK_STAMP);
    struct stat st;
    time_t now = time(NULL);
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_mtime <= now &&
        now - st.st_mtime < 3600)
        return 0;
    /* marked before the scan, so that jobs starting together mostly leave it to one. The
     * stamp carries this clock's time, not the file system's: a network or virtual file system
     * may stamp "now" seconds ahead of time(), which read as a stamp from the future and made
     * every call due. */
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
        struct timespec t[2] = {{.tv_sec = now, .tv_nsec = 0}, {.tv_sec = now, .tv_nsec = 0}};
        if (futimens(fd, t) != 0) /* explicit times need the owner; "now" only write access (a shared cache) */
            futimens(fd, NULL);
        close(fd);
    }
    return 1;
}

uint64_t jit_disk_max_bytes(void)
{
    const char *e = getenv("PLUME_KERNEL_CACHE_MAX_MB");
    if (!e || !e[0])
        return (uint64_t)JIT_DISK_DEFAULT_MAX_MB << 20;
    char *end;
    errno = 0;
    unsigned long long mb = strtoull(e, &end, 10);
    if (*end || end == e || e[0] == '-' || errno || mb > (UINT64_MAX >> 20)) {
        /* a farm job's typo should not pass unseen: the cache then grows to the default */
        fprintf(stderr, "plume: PLUME_KERNEL_CACHE_MAX_MB='%s' is not a size in MiB; using %u\n",
                e, JIT_DISK_DEFAULT_MAX_MB);
        return (uint64_t)JIT_DISK_DEFAULT_MAX_MB << 20;
    }
    return (uint64_t)mb << 20;
}
