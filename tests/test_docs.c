/* test_docs.c: the documentation's links resolve. Every Markdown link and image of README.md and
 * of the .md files of docs/ that names a file of the repository must name one that exists, and an
 * anchor (FILE#section, or #section in the same file) must be a heading of that file, by GitHub's
 * rule for a heading's anchor: lower case, punctuation dropped but for '-' and '_', each space a
 * '-', and "-1", "-2", ... after a repeated one. Links to other sites are not followed. */
#include "check.h"
#include "proc.h"
#include <ctype.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* a fence line (``` or ~~~) opens or closes a code block, whose text is no Markdown */
static int is_fence(const char *line)
{
    while (*line == ' ')
        line++;
    return !strncmp(line, "```", 3) || !strncmp(line, "~~~", 3);
}

/* whether FILE has a heading whose anchor is `anchor` */
static int has_anchor(const char *file, const char *anchor)
{
    char *s = read_all(file, NULL);
    if (!s)
        return 0;
    int found = 0, fenced = 0;
    char seen[512][128];
    int nseen = 0;
    for (char *line = s, *next; line && *line && !found; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        if (is_fence(line)) {
            fenced = !fenced;
            continue;
        }
        if (fenced || line[0] != '#')
            continue;
        char *h = line;
        while (*h == '#')
            h++;
        if (*h != ' ')
            continue;
        char slug[128];
        size_t k = 0;
        for (h++; *h && k < sizeof slug - 8; h++) {
            unsigned char c = (unsigned char)*h;
            if (c >= 0x80 || isalnum(c) || c == '-' || c == '_')
                slug[k++] = (char)tolower(c);
            else if (c == ' ')
                slug[k++] = '-';
        }
        slug[k] = 0;
        int dup = 0;
        for (int i = 0; i < nseen; i++)
            dup += !strcmp(seen[i], slug);
        if (nseen < 512)
            snprintf(seen[nseen++], sizeof seen[0], "%s", slug);
        if (dup)
            snprintf(slug + k, sizeof slug - k, "-%d", dup);
        found = !strcmp(slug, anchor);
    }
    free(s);
    return found;
}

/* Checks the links of one Markdown file; returns how many are broken, each said on stderr when
 * `say`. */
static int broken_links(const char *md, int say)
{
    char *s = read_all(md, NULL);
    if (!s) {
        if (say)
            fprintf(stderr, "%s: cannot read\n", md);
        return 1;
    }
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", md);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[1] = 0;
    else
        dir[0] = 0;
    int bad = 0, fenced = 0, lineno = 0;
    for (char *line = s, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        lineno++;
        if (is_fence(line)) {
            fenced = !fenced;
            continue;
        }
        if (fenced)
            continue;
        for (char *p = strstr(line, "]("); p; p = strstr(p + 2, "](")) {
            char target[1024];
            size_t n = strcspn(p + 2, ") ");
            if (p[2 + n] != ')' && p[2 + n] != ' ')
                continue; /* no link: "](" inside text */
            snprintf(target, sizeof target, "%.*s", (int)n, p + 2);
            if (!n || strstr(target, "://") || !strncmp(target, "mailto:", 7))
                continue;
            char *hash = strchr(target, '#');
            const char *anchor = hash ? hash + 1 : NULL;
            if (hash)
                *hash = 0;
            char path[2048];
            if (target[0])
                snprintf(path, sizeof path, "%s%s", dir, target);
            else
                snprintf(path, sizeof path, "%s", md);
            struct stat st;
            const char *why = NULL;
            if (stat(path, &st))
                why = "no such file";
            else if (anchor && S_ISREG(st.st_mode) && !has_anchor(path, anchor))
                why = "no heading with that anchor";
            if (why) {
                bad++;
                if (say)
                    fprintf(stderr, "%s:%d: %s%s%s: %s\n", md, lineno, target, anchor ? "#" : "",
                            anchor ? anchor : "", why);
            }
        }
    }
    free(s);
    return bad;
}

TEST(docs_links_resolve)
{
    glob_t g;
    int files = 1, bad = broken_links("README.md", 1);
    if (glob("docs/*.md", 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++, files++)
            bad += broken_links(g.gl_pathv[i], 1);
        globfree(&g);
    }
    CHECK_MSG(files > 5, "README.md and docs/*.md: %d files read (run from the repository root)",
              files);
    CHECK_MSG(bad == 0, "%d broken links in README.md and docs/*.md (listed above)", bad);
}

/* the check itself: a page with a good link, a good anchor, a missing file, a missing anchor and
 * a repeated heading's anchor finds exactly the two that are broken */
TEST(docs_link_check_finds_broken_links)
{
    char dir[] = "/tmp/vla-docs-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char md[64], other[64];
    snprintf(md, sizeof md, "%s/a.md", dir);
    snprintf(other, sizeof other, "%s/b.md", dir);
    FILE *f = fopen(other, "w");
    fputs("# B\n\n## The `two` commands, 2x\n\n## Notes\n\n## Notes\n", f);
    fclose(f);
    f = fopen(md, "w");
    fputs("# A\n\n[b](b.md) [s](b.md#the-two-commands-2x) [n](b.md#notes-1) [w](https://x.org/y)\n"
          "```\n[not a link](nowhere.md)\n```\n[gone](c.md) [bad](b.md#the-two-commands)\n"
          "[self](#a)\n", f);
    fclose(f);
    CHECK_MSG(broken_links(md, 0) == 2, "%d broken links found, 2 planted", broken_links(md, 1));
    remove(md);
    remove(other);
    remove(dir);
}
