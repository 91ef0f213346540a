/* .vdb files whose bytes depend only on their content (vdb_stable.h). */
#define _GNU_SOURCE
#include "plugin/vdb_stable.h"
#include "plugin/vdb_bridge.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* OpenVDB's file header: the magic number (8 bytes), the file format version (4), the library's
 * major and minor version (4 + 4), a byte saying whether grid offsets follow, then (format
 * 222 and later) the UUID as 36 ASCII characters. */
#define UUID_AT 21
#define UUID_LEN 36
#define MIN_FORMAT 222

static _Atomic unsigned tmp_seq;

static int looks_like_uuid(const unsigned char *u)
{
    for (int i = 0; i < UUID_LEN; i++) {
        int dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? u[i] != '-' : !isxdigit(u[i]))
            return 0;
    }
    return 1;
}

/* The content hash: four 64-bit lanes, each taking every fourth 8-byte word (multiply, rotate,
 * multiply), so the lanes' multiplies overlap; bytes that do not fill a 32-byte block go into
 * lane 0 one at a time. A byte-wise 128-bit FNV-1a took 2 ns a byte, a quarter of a checkpoint's
 * write time; this takes about a tenth of that. Not a cryptographic hash: the UUID only has to
 * differ when the content does, by chance 2^-128 otherwise. The stream is cut the same way for
 * the same file (hash_bytes calls of whole 32-byte blocks and one last partial call). */
typedef struct content_hash {
    uint64_t lane[4];
    uint64_t bytes;
} content_hash;

#define HASH_M1 0x9e3779b97f4a7c15ull /* odd constants with well-spread bits */
#define HASH_M2 0xc2b2ae3d27d4eb4full

static uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t mix_word(uint64_t lane, uint64_t w)
{
    return rotl64(lane ^ (w * HASH_M2), 29) * HASH_M1;
}

static void hash_init(content_hash *h)
{
    for (int i = 0; i < 4; i++)
        h->lane[i] = HASH_M1 * (uint64_t)(2 * i + 1);
    h->bytes = 0;
}

static void hash_bytes(content_hash *h, const unsigned char *p, size_t n)
{
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++) {
            uint64_t w;
            memcpy(&w, p + i + 8 * k, 8);
            h->lane[k] = mix_word(h->lane[k], w);
        }
    for (; i < n; i++)
        h->lane[0] = mix_word(h->lane[0], (uint64_t)p[i] | 0x100u);
    h->bytes += n;
}

/* Murmur-style finaliser, so every input bit reaches every output bit. */
static uint64_t avalanche(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static void hash_final(const content_hash *h, unsigned char out[16])
{
    uint64_t a = avalanche(h->lane[0] ^ rotl64(h->lane[2], 17) ^ h->bytes);
    uint64_t b = avalanche(h->lane[1] ^ rotl64(h->lane[3], 17) ^ (a * HASH_M2));
    a = avalanche(a ^ h->lane[3] ^ (b * HASH_M1));
    for (int i = 0; i < 8; i++) {
        out[i] = (unsigned char)(a >> (56 - 8 * i));
        out[8 + i] = (unsigned char)(b >> (56 - 8 * i));
    }
}

/* The UUID made from a hash of the whole file except the UUID's bytes, as text in out, and
 * the UUID the file holds in have (both UUID_LEN + 1). Returns 0, 1 when the header is not one
 * this code knows, -1 on an I/O error. */
static int content_uuid(int fd, char *out, char *have)
{
    unsigned char head[UUID_AT + UUID_LEN];
    if (pread(fd, head, sizeof head, 0) != (ssize_t)sizeof head)
        return 1;
    static const unsigned char magic[8] = {0x20, 0x42, 0x44, 0x56, 0, 0, 0, 0};
    uint32_t format = (uint32_t)head[8] | (uint32_t)head[9] << 8 | (uint32_t)head[10] << 16 |
                      (uint32_t)head[11] << 24;
    if (memcmp(head, magic, 8) != 0 || format < MIN_FORMAT || !looks_like_uuid(head + UUID_AT))
        return 1;
    content_hash h;
    hash_init(&h);
    hash_bytes(&h, head, UUID_AT);
    enum { CHUNK = 1 << 20 }; /* a multiple of 32: only the last read leaves a partial block */
    unsigned char *buf = malloc(CHUNK);
    if (!buf)
        return -1;
    off_t at = UUID_AT + UUID_LEN;
    for (;;) {
        size_t got = 0; /* fill the whole chunk unless the file ends, so the cuts are fixed */
        while (got < CHUNK) {
            ssize_t k = pread(fd, buf + got, CHUNK - got, at + (off_t)got);
            if (k < 0) {
                free(buf);
                return -1;
            }
            if (k == 0)
                break;
            got += (size_t)k;
        }
        hash_bytes(&h, buf, got);
        at += (off_t)got;
        if (got < CHUNK)
            break;
    }
    free(buf);
    unsigned char b[16];
    hash_final(&h, b);
    /* RFC 9562 layout: version 8 (custom), variant 10. */
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x80);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, UUID_LEN + 1,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
             b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
             b[15]);
    memcpy(have, head + UUID_AT, UUID_LEN);
    have[UUID_LEN] = 0;
    return 0;
}

/* Writes the content UUID into the file's header. Returns as content_uuid. */
static int stamp_uuid(int fd)
{
    char text[UUID_LEN + 1], have[UUID_LEN + 1];
    int rc = content_uuid(fd, text, have);
    if (rc)
        return rc;
    return pwrite(fd, text, UUID_LEN, UUID_AT) == UUID_LEN ? 0 : -1;
}

int pl_vdb_stable_verify(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char want[UUID_LEN + 1], have[UUID_LEN + 1];
    int rc = content_uuid(fd, want, have);
    close(fd);
    if (rc)
        return -1;
    /* version 8 (ours) at character 14; OpenVDB's own random UUIDs are version 4 */
    if (have[14] != '8')
        return -1;
    return strcmp(want, have) == 0 ? 1 : 0;
}

plume_status pl_vdb_write_stable_core(const char *path, const plm_vdb_grid *const *grids, int count,
                                      const plm_vdb_write_options *wo, char *err, size_t err_size,
                                      int *uuid_left)
{
    *uuid_left = 0;
    if (err_size)
        err[0] = 0;
    if (vdb_make_parent_dirs(path) != 0) {
        snprintf(err, err_size, "cannot create the folder for %s: %s", path, strerror(errno));
        return PLUME_ERR_IO;
    }
    /* The temporary file sits beside path (same file system: the rename is atomic), hidden. */
    char tmp[4300];
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    snprintf(tmp, sizeof tmp, "%.*s.%s.tmp%d.%u", dir_len, path, slash ? slash + 1 : path, (int)getpid(),
             atomic_fetch_add(&tmp_seq, 1u));
    plm_vdb_write_options o = wo ? *wo : (plm_vdb_write_options){0};
    int sync_to_disk = !o.no_fsync;
    o.no_fsync = 1; /* flushed once, below, after the UUID is in */
    plm_vdb_error e;
    if (plm_vdb_write(tmp, grids, count, &o, &e) != PLM_VDB_OK) {
        unlink(tmp);
        snprintf(err, err_size, "%s: %s", path, e.message);
        return e.status == PLM_VDB_ERR_ARGUMENT ? PLUME_ERR_INVALID_ARGUMENT : PLUME_ERR_IO;
    }
    int fd = open(tmp, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        int why = errno;
        unlink(tmp);
        snprintf(err, err_size, "%s: cannot reopen the temporary file: %s", path, strerror(why));
        return PLUME_ERR_IO;
    }
    int st = stamp_uuid(fd);
    int why = errno;
    *uuid_left = st == 1;
    if (st >= 0 && sync_to_disk && fsync(fd) != 0) {
        st = -1;
        why = errno;
    }
    if (close(fd) != 0 && st >= 0) {
        st = -1;
        why = errno;
    }
    if (st >= 0 && rename(tmp, path) != 0) {
        st = -1;
        why = errno;
    }
    if (st < 0) {
        unlink(tmp);
        snprintf(err, err_size, "cannot write %s: %s", path, strerror(why));
        return PLUME_ERR_IO;
    }
    return PLUME_OK;
}

plume_status pl_vdb_write_stable(pl_context *ctx, const char *who, const char *path,
                                 const plm_vdb_grid *const *grids, int count, const plm_vdb_write_options *wo)
{
    char err[4600];
    int uuid_left = 0;
    plume_status st = pl_vdb_write_stable_core(path, grids, count, wo, err, sizeof err, &uuid_left);
    if (uuid_left)
        pl_log(ctx, PLUME_LOG_DEBUG, "%s: unknown OpenVDB header; its UUID is left random", path);
    if (st == PLUME_OK)
        return PLUME_OK;
    return who ? pl_fail(ctx, st, "%s: %s", who, err) : pl_fail(ctx, st, "%s", err);
}
