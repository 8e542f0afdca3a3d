/* test_files.c: lib/file.h, the rules for the files a program is named, and lib/dat.c's tables
 * under them: what is read whole is a regular file of bounded size (a FIFO is refused, not waited
 * on); what is renamed into place replaces only a regular file, even when the path became a FIFO
 * while the table was being written, and never a symlink itself. Every special file lives in a
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
 * symlink to nothing is refused at the open, not replaced by a file at the close. */
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
    errno = 0;
    CHECK_EQ_INT(vla_dat_open(&f, p, 1, argv), VLA_EIO);
    CHECK_MSG(errno == ENOENT, "errno %d", errno);
    CHECK(is_kind(p, S_IFLNK));
    CHECK_EQ_INT(vla_dat_open(&f, dir, 1, argv), VLA_EIO);
    CHECK(errno == EISDIR);
    scratch_rm();
}
