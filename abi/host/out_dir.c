/* The output folder of `plume cook` (out_dir.h). */
#define _GNU_SOURCE
#include "out_dir.h"
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int outdir_lock(const char *dir, char *why, size_t whylen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/.plume_lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(why, whylen, "cannot create the lock %s: %s", path, strerror(errno));
        return -2;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char who[256] = "";
        ssize_t r = pread(fd, who, sizeof who - 1, 0);
        who[r > 0 ? r : 0] = 0;
        who[strcspn(who, "\n")] = 0;
        close(fd);
        if (e == EWOULDBLOCK) {
            snprintf(why, whylen, "another cook is writing to %s%s%s%s; wait for it, or give this one "
                     "another --out", dir, who[0] ? " (" : "", who, who[0] ? ")" : "");
            return -1;
        }
        snprintf(why, whylen, "cannot lock %s: %s", path, strerror(e));
        return -2;
    }
    char host[128] = "?", who[300];
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = 0;
    int n = snprintf(who, sizeof who, "pid %d on %s\n", (int)getpid(), host);
    if (ftruncate(fd, 0) == 0 && pwrite(fd, who, (size_t)n, 0) != n) {
        /* the lock holds without the note; only the message of a second cook is poorer */
    }
    return fd;
}

int outdir_lock_intact(int fd, const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/.plume_lock", dir);
    struct stat held, now;
    if (fstat(fd, &held) != 0 || held.st_nlink == 0 || stat(path, &now) != 0)
        return 0;
    return held.st_dev == now.st_dev && held.st_ino == now.st_ino;
}

/* Digits at s up to stop (exclusive), at least one; their value in *v. */
static int digits(const char *s, const char *stop, long *v)
{
    if (s >= stop)
        return 0;
    long x = 0;
    for (const char *p = s; p < stop; p++) {
        if (*p < '0' || *p > '9' || x > 100000000)
            return 0;
        x = x * 10 + (*p - '0');
    }
    *v = x;
    return 1;
}

/* The pid in a temporary name's suffix, or 0 when name is not one of Plume's (a hidden
 * .vdb's: frames and the checkpoint). */
static long temp_pid(const char *name)
{
    if (name[0] != '.' || !strstr(name, ".vdb.tmp"))
        return 0;
    const char *end = name + strlen(name);
    long pid = 0, seq = 0;
    /* vdbio's ".NAME.tmp-PID-N" (inside the next form too): take the outermost */
    const char *t = strstr(name, ".tmp-");
    for (const char *u = t; u; u = strstr(u + 1, ".tmp-"))
        t = u;
    if (t) {
        const char *d = strchr(t + 5, '-');
        if (d && digits(t + 5, d, &pid) && digits(d + 1, end, &seq))
            return pid;
    }
    /* ".NAME.tmpPID.N": the plugin's stable writer and the checkpoint writer */
    const char *dot = strrchr(name, '.');
    for (const char *u = strstr(name, ".tmp"); u; u = strstr(u + 1, ".tmp"))
        if (u + 4 < dot && digits(u + 4, dot, &pid) && digits(dot + 1, end, &seq))
            return pid;
    return 0;
}

int outdir_clean_temps(const char *dir, uint64_t *bytes)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        /* Our own pid too: nothing is written before this runs, so such a file is a killed
         * predecessor's that had the same pid (every job is pid 1 in some containers). */
        long pid = temp_pid(e->d_name);
        if (pid <= 0 || (pid != (long)getpid() && !(kill((pid_t)pid, 0) != 0 && errno == ESRCH)))
            continue;
        char path[4600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (unlink(path) == 0) {
            removed++;
            *bytes += (uint64_t)st.st_size;
        }
    }
    closedir(d);
    return removed;
}

void outdir_frame_path(const char *pattern, int64_t frame, char *out, size_t n)
{
    char tmp[4200];
    if (!strchr(pattern, '#')) {
        const char *slash = strrchr(pattern, '/'), *dot = strrchr(pattern, '.');
        if (!dot || (slash && dot < slash))
            dot = pattern + strlen(pattern);
        snprintf(tmp, sizeof tmp, "%.*s_####%s", (int)(dot - pattern), pattern, dot);
        pattern = tmp;
    }
    size_t k = 0;
    for (const char *p = pattern; *p && k + 1 < n;) {
        if (*p != '#') {
            out[k++] = *p++;
            continue;
        }
        int width = 0;
        while (p[width] == '#')
            width++;
        int w = snprintf(out + k, n - k, "%0*lld", width, (long long)frame);
        k += w > 0 ? (size_t)w : 0;
        if (k >= n)
            k = n - 1;
        p += width;
    }
    out[k] = 0;
}

/* rmdir from the file's folder up to dir, stopping at the first that is not empty (or not
 * ours to remove). */
static void remove_empty_parents(const char *file, const char *dir)
{
    char buf[4200];
    snprintf(buf, sizeof buf, "%s", file);
    size_t dl = strlen(dir);
    for (;;) {
        char *slash = strrchr(buf, '/');
        if (!slash)
            return;
        *slash = 0;
        if (strlen(buf) < dl || strncmp(buf, dir, dl) != 0 || rmdir(buf) != 0)
            return;
        if (strlen(buf) == dl)
            return;
    }
}

int outdir_drop_recreated(const char *dir, char *const *patterns, uint32_t npatterns, int64_t first,
                          int64_t last, time_t not_before)
{
    char lock[4200];
    snprintf(lock, sizeof lock, "%s/.plume_lock", dir);
    struct stat st;
    if (stat(dir, &st) != 0 || access(lock, F_OK) == 0)
        return 0; /* gone for good, or another cook's now */
    int removed = 0;
    size_t dl = strlen(dir);
    for (uint32_t i = 0; i < npatterns; i++) {
        /* only outputs inside the folder: one elsewhere was not removed with it */
        const char *rest = patterns[i] + dl;
        if (strncmp(patterns[i], dir, dl) != 0 || rest[0] != '/' || strstr(rest, "/../") ||
            (strlen(rest) >= 3 && !strcmp(rest + strlen(rest) - 3, "/..")))
            continue;
        /* the writer holds at most two frames besides the one being cooked */
        for (int64_t f = last - 3 > first ? last - 3 : first; f <= last; f++) {
            char path[4200];
            struct stat fs;
            outdir_frame_path(patterns[i], f, path, sizeof path);
            if (lstat(path, &fs) != 0 || !S_ISREG(fs.st_mode) || fs.st_mtime < not_before)
                continue;
            if (unlink(path) == 0) {
                removed++;
                remove_empty_parents(path, dir);
            }
        }
    }
    return removed;
}
