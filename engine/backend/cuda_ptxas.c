/* PTX to a cubin with the toolkit's ptxas, in a child process (see cuda_ptxas.h). */
#define _GNU_SOURCE
#include "engine/backend/cuda_ptxas.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define DEFAULT_PTXAS "/usr/local/cuda/bin/ptxas"

static void set_msg(char *msg, size_t n, const char *fmt, ...)
{
    if (!msg || !n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, n, fmt, ap);
    va_end(ap);
}

int cuda_ptxas_find(char *path, size_t n)
{
    const char *env = getenv("PLUME_PTXAS");
    const char *p = env ? env : DEFAULT_PTXAS;
    if (!p[0] || !strcmp(p, "off") || access(p, X_OK) != 0 || strlen(p) >= n)
        return 0;
    memcpy(path, p, strlen(p) + 1);
    return 1;
}

/* Reads a whole file; NULL when it cannot. */
static void *read_all(const char *file, size_t *size)
{
    FILE *f = fopen(file, "rb");
    if (!f)
        return NULL;
    void *buf = NULL;
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)len + 1)) != NULL) {
        if (fread(buf, 1, (size_t)len, f) != (size_t)len) {
            free(buf);
            buf = NULL;
        } else {
            ((char *)buf)[len] = 0;
            *size = (size_t)len;
        }
    }
    fclose(f);
    return buf;
}

static int write_all(const char *file, const char *text)
{
    FILE *f = fopen(file, "wb");
    if (!f)
        return -1;
    size_t len = strlen(text);
    int ok = fwrite(text, 1, len, f) == len;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* ptxas's output, its lines joined with "; ", for a one-line message. */
static void output_lines(const char *file, char *buf, size_t n)
{
    size_t size = 0;
    char *text = read_all(file, &size);
    buf[0] = 0;
    if (!text)
        return;
    size_t at = 0;
    for (char *line = strtok(text, "\r\n"); line && at + 4 < n; line = strtok(NULL, "\r\n"))
        at += (size_t)snprintf(buf + at, n - at, "%s%s", at ? "; " : "", line);
    free(text);
}

int cuda_ptxas_compile(const char *ptxas, int sm, const char *ptx, void **image, size_t *size,
                       char *msg, size_t msg_size)
{
    *image = NULL;
    *size = 0;
    const char *tmp = getenv("TMPDIR");
    tmp = tmp && tmp[0] ? tmp : "/tmp";
    char dir[4096], in[4200], out[4200], log[4200], arch[32];
    snprintf(dir, sizeof dir, "%s/plume-ptxas-XXXXXX", tmp);
    if (!mkdtemp(dir)) {
        set_msg(msg, msg_size, "ptxas: cannot make a folder in %s: %s", tmp, strerror(errno));
        return -1;
    }
    snprintf(in, sizeof in, "%s/task.ptx", dir);
    snprintf(out, sizeof out, "%s/task.cubin", dir);
    snprintf(log, sizeof log, "%s/ptxas.log", dir);
    snprintf(arch, sizeof arch, "-arch=sm_%d", sm);
    int rc = -1;
    if (write_all(in, ptx) != 0) {
        set_msg(msg, msg_size, "ptxas: cannot write %s: %s", in, strerror(errno));
        goto done;
    }
    char *argv[] = {(char *)ptxas, arch, "-O3", "-o", out, in, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int err = posix_spawn(&pid, ptxas, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (err != 0) {
        set_msg(msg, msg_size, "ptxas: cannot run %s: %s", ptxas, strerror(err));
        goto done;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char lines[1024];
        output_lines(log, lines, sizeof lines);
        if (WIFEXITED(status))
            set_msg(msg, msg_size, "ptxas exited with %d%s%s", WEXITSTATUS(status),
                    lines[0] ? ": " : "", lines);
        else
            set_msg(msg, msg_size, "ptxas was killed by signal %d", WTERMSIG(status));
        goto done;
    }
    if (!(*image = read_all(out, size))) {
        set_msg(msg, msg_size, "ptxas: no machine code in %s", out);
        goto done;
    }
    rc = 0;
done:
    unlink(in);
    unlink(out);
    unlink(log);
    rmdir(dir);
    return rc;
}
