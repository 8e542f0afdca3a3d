/* test_files.c: lib/file.h, the rules for the files a program is named, and lib/dat.c's tables
 * under them: what is read whole is a regular file of bounded size (a FIFO is refused, not waited
 * on); what is renamed into place replaces only a regular file or a symbolic link (the link
 * itself, never the file it names), even when the path became a FIFO while the table was being
 * written. Every special file lives in a
 * scratch folder, so that a regression replaces nothing outside it. */
#define _GNU_SOURCE
#include "check.h"
#include "file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static const char *scratch_dir(void)
{
    snprintf(dir, sizeof dir, "%s/vlafiles.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(dir);
}

static void scratch_rm(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "test_files: could not remove %s\n", dir);
}

TEST(file_read_open)
{
    if (!scratch_dir()) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    char p[128];
    FILE *f;
    const char *kind = NULL;
    CHECK_EQ_INT(vla_file_read_open("/dev/zero", 1000, &f, &kind), VLA_EINVAL);
    CHECK(f == NULL && kind && !strcmp(kind, "a character device"));
    snprintf(p, sizeof p, "%s/fifo", dir);
    CHECK(mkfifo(p, 0600) == 0);
    CHECK_EQ_INT(vla_file_read_open(p, 1000, &f, &kind), VLA_EINVAL); /* at once: no writer */
    CHECK(kind && !strcmp(kind, "a FIFO"));
    CHECK_EQ_INT(vla_file_read_open(dir, 1000, &f, &kind), VLA_EINVAL);
    CHECK(errno == EISDIR && !strcmp(kind, "a directory"));
    snprintf(p, sizeof p, "%s/missing", dir);
    CHECK_EQ_INT(vla_file_read_open(p, 1000, &f, &kind), VLA_EIO);
    CHECK(errno == ENOENT);
    /* a regular file: at most max bytes */
    snprintf(p, sizeof p, "%s/ten", dir);
    FILE *w = fopen(p, "w");
    CHECK(w && fputs("0123456789", w) >= 0 && fclose(w) == 0);
    CHECK_EQ_INT(vla_file_read_open(p, 9, &f, &kind), VLA_ERANGE);
    CHECK_EQ_INT(vla_file_read_open(p, 10, &f, &kind), VLA_OK);
    char buf[16] = {0};
    CHECK(f && fread(buf, 1, sizeof buf, f) == 10 && !strcmp(buf, "0123456789"));
    if (f)
        fclose(f);
    scratch_rm();
}

static int is_kind(const char *p, mode_t kind)
{
    struct stat st;
    return lstat(p, &st) == 0 && (st.st_mode & S_IFMT) == kind;
}

/* A table whose path turns into a FIFO while it is written is not renamed over the FIFO; a
 * symlink to nothing is replaced by the table, a regular file (no folder is made for its target). */
TEST(dat_replaces_only_regular_files)
{
    if (!scratch_dir()) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    char *argv[] = {"prog", NULL};
    char p[128], tmp[160];
    vla_dat *f;
    snprintf(p, sizeof p, "%s/t.dat", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)getpid());
    CHECK_EQ_INT(vla_dat_open(&f, p, 1, argv), VLA_OK);
    if (f) {
        vla_dat_columns(f, "a");
        vla_dat_row(f, (double[]){1}, 1);
        CHECK(mkfifo(p, 0600) == 0); /* meanwhile, the path became a FIFO */
        CHECK_EQ_INT(vla_dat_close(f), VLA_EIO);
        CHECK_MSG(is_kind(p, S_IFIFO), "%s was replaced", p);
        CHECK(access(tmp, F_OK) != 0);
    }
    snprintf(p, sizeof p, "%s/dangling.dat", dir);
    CHECK(symlink("missing/x.dat", p) == 0);
    CHECK_EQ_INT(vla_dat_open(&f, p, 1, argv), VLA_OK);
    if (f) {
        vla_dat_columns(f, "a");
        CHECK_EQ_INT(vla_dat_close(f), VLA_OK);
    }
    CHECK(is_kind(p, S_IFREG));
    snprintf(p, sizeof p, "%s/missing", dir);
    CHECK(access(p, F_OK) != 0);
    CHECK_EQ_INT(vla_dat_open(&f, dir, 1, argv), VLA_EIO);
    CHECK(errno == EISDIR);
    scratch_rm();
}

/* the text of file p (to free), NULL when it cannot be read */
static char *text_of(const char *p)
{
    FILE *f = fopen(p, "rb");
    char *t = f ? calloc(1, 4096) : NULL;
    if (t && fread(t, 1, 4095, f) == 0 && ferror(f))
        free(t), t = NULL;
    if (f)
        fclose(f);
    return t;
}

/* Every writer of lib/file.h (vla_file_write_whole, a table, vla_npy_write) replaces a symbolic
 * link at its name with a regular file: the file the link names keeps its bytes, a link to
 * nothing makes nothing at its target. Without the rule, OUT.ckpt planted as a link to a
 * system file has that file overwritten by the checkpoint. */
TEST(file_writers_replace_links_not_targets)
{
    if (!scratch_dir()) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    char victim[128], p[128], q[128];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *w = fopen(victim, "w");
    CHECK(w && fputs("keep me\n", w) >= 0 && fclose(w) == 0);
    const char *kind = NULL;
    for (int writer = 0; writer < 3; writer++) {
        for (int dangling = 0; dangling < 2; dangling++) {
            snprintf(p, sizeof p, "%s/out%d%d", dir, writer, dangling);
            CHECK(symlink(dangling ? "nowhere/x" : "victim", p) == 0);
            int e;
            if (writer == 0) {
                e = vla_file_write_whole(p, "new\n", 4, &kind);
            } else if (writer == 1) {
                char *argv[] = {"prog", NULL};
                vla_dat *f;
                e = vla_dat_open(&f, p, 1, argv);
                if (!e) {
                    vla_dat_columns(f, "a");
                    e = vla_dat_close(f);
                }
            } else {
                e = vla_npy_write(p, (double[]){1, 2}, 1, (long[]){2});
            }
            CHECK_MSG(e == VLA_OK, "writer %d, %s link: %d", writer, dangling ? "dangling" : "a", e);
            CHECK_MSG(is_kind(p, S_IFREG), "writer %d: %s is not a regular file now", writer, p);
            char *t = text_of(victim);
            CHECK_MSG(t && !strcmp(t, "keep me\n"), "writer %d wrote through the link: %.20s",
                      writer, t ? t : "(gone)");
            free(t);
            t = text_of(p);
            CHECK_MSG(t && (writer != 0 || !strcmp(t, "new\n")), "writer %d: %s", writer, p);
            free(t);
        }
    }
    snprintf(q, sizeof q, "%s/nowhere", dir);
    CHECK(access(q, F_OK) != 0);
    /* a directory, a FIFO at the name: still refused, left as they are */
    snprintf(p, sizeof p, "%s/fifo", dir);
    CHECK(mkfifo(p, 0600) == 0);
    CHECK_EQ_INT(vla_file_write_whole(p, "x", 1, &kind), VLA_EINVAL);
    CHECK(is_kind(p, S_IFIFO));
    CHECK_EQ_INT(vla_npy_write(p, (double[]){1}, 1, (long[]){1}), VLA_EIO);
    CHECK(is_kind(p, S_IFIFO));
    scratch_rm();
}
