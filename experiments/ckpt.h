/* ckpt.h: the checkpoint file OUT.ckpt (ckpt.c): a header with the command's key, then a record
 * per run (vla_drive's, drive.c) or unit of work (vla_units'), each with its checksum; read back
 * with each record's verdict, written atomically beside OUT. */
#ifndef VLA_CKPT_H
#define VLA_CKPT_H
#include "cli.h"
#include <stdio.h>


/* What a checkpoint file or record is to this command, the return of its reader: CK_OK (read),
 * CK_MISSING (none), CK_DAMAGED, CK_OTHER_RUN (another command's, refused), CK_UNREADABLE (the file
 * cannot be opened), CK_STOPPED (a signal). A verdict other than CK_OK and CK_MISSING comes with its
 * reason in a vla_error, written where it is found: ck_fail(err, CK_DAMAGED, "its ...") writes it
 * (code VLA_EFORMAT; VLA_EINVAL for another run's) and is the verdict. */
enum { CK_OK, CK_MISSING, CK_DAMAGED, CK_OTHER_RUN, CK_UNREADABLE, CK_STOPPED };
#define ck_fail(err, verdict, ...)                                                                 \
    (vla_fail((err), (verdict) == CK_OTHER_RUN ? VLA_EINVAL : VLA_EFORMAT, __VA_ARGS__), (verdict))

/* The file as such, whatever its records hold (vla_drive's runs, vla_units' units) */
typedef struct {
    const char *out, *key; /* the file is OUT.ckpt */
    int n;                 /* records */
    long rec_min, rec_max; /* the lengths a record of this command can have */
    /* record i into *buf (*n bytes, to free; *n 0: none); VLA_EINTR: the previous file's stays */
    int (*record)(void *ctx, int i, char **buf, size_t *n);
    /* record i (len bytes whose checksum matched) from f: CK_OK, or CK_DAMAGED with err */
    int (*parse)(void *ctx, FILE *f, int i, long len, vla_error *err);
    void *ctx;
} ckpt_file;

/* the key of c's command: the build, the program, its columns, more (the caller's lines), the
 * model's constants, the stream by its contents, the options that decide the numbers; NULL, said,
 * with the exit status in *status */
char *ckpt_key(const vla_cli *c, const vla_cli_spec *spec, const char *columns, const char *more,
               int *status);
/* OUT.ckpt into k's records: each record's verdict in got, the file's the return (CK_*) */
int ckpt_load(const ckpt_file *k, int *got, vla_error *first_bad, vla_error *err);
/* every record into OUT.ckpt, atomically: 0, or the reason in err */
int ckpt_save(const ckpt_file *k, int *kept, int *first_kept, vla_error *err);
/* the seconds between checkpoints (VLA_CHECKPOINT_SECONDS), and VLA_STOP_AFTER_CHECKPOINTS read:
 * 0, or 2 after the message */
int ckpt_every(const char *prog, double *every);
/* whether checkpoints go beside out (a regular file, or none yet) */
int ckpt_beside(const char *out);
/* what ckpt_load's verdict on the file ends, said: the exit status (0: go on) */
int ckpt_refused(const char *prog, const char *out, int file, const vla_error *err);
/* OUT.ckpt removed when the program exits 0 */
void ckpt_remove_at_exit(const char *out);
/* a verdict's every output written (table, report): its exit 1, a check that failed, removes the
 * checkpoint as exit 0 does */
void ckpt_verdict_written(void);
#endif
