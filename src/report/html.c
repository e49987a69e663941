/*
 * report/html: one self-contained page (docs/formats.md): the JSON report
 * and a flame tree of the call stacks as data, and the script and style
 * that draw them inline, so it opens offline from a file and fetches
 * nothing. The page shows the summary, per CPU the steal attributed
 * beside the kernel's, CPU and steal per CPU over time, the top rows'
 * apparent and corrected time, the accounts (target, control, total: seed
 * 000's FIG. 3) and an icicle of corrected time with steal (hover for
 * figures, click to zoom); its tables sort. Every figure the page shows
 * also carries its exact value (data-ns), for tests and for copying.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "html_page.h"
#include "../core/grow.h"
#include "../core/hindex.h"
#include "../core/strtab.h"
#include "../core/banned.h"

/* A node of the flame tree: a frame under its parent's. */
struct fnode {
	uint32_t name;		/* in the tree's labels */
	uint32_t parent, child, next;	/* first child, next sibling */
	uint64_t cpu_ns, steal_ns;
};

struct ftree {
	struct fnode *v;
	uint32_t n, cap;
	struct hindex index;	/* (parent, name) */
	struct strtab labels;
};

static bool node_eq(const void *ctx, uint32_t id)
{
	const struct { const struct ftree *t; uint32_t parent, name; } *k = ctx;
	return k->t->v[id].parent == k->parent && k->t->v[id].name == k->name;
}

/* The child of parent named s, made when new; UINT32_MAX: no memory. */
static uint32_t child(struct ftree *t, uint32_t parent, const char *s)
{
	uint32_t name = strtab__intern(&t->labels, s, strlen(s));
	if (name == HINDEX_NONE)
		return UINT32_MAX;
	struct { const struct ftree *t; uint32_t parent, name; } k = { t, parent, name };
	uint64_t h = hash_mix((uint64_t)parent << 32 | name);
	uint32_t id = hindex__find(&t->index, h, node_eq, &k);
	if (id != HINDEX_NONE)
		return id;
	if (grow_array((void **)&t->v, &t->cap, t->n, sizeof(*t->v), 1024) ||
	    hindex__insert(&t->index, h, t->n))
		return UINT32_MAX;
	t->v[t->n] = (struct fnode){ .name = name, .parent = parent, .child = UINT32_MAX,
				     .next = t->v[parent].child };
	t->v[parent].child = t->n;
	return t->n++;
}

static void add_time(struct ftree *t, uint32_t id, const struct row *w)
{
	t->v[id].cpu_ns += w->f.cpu_ns;
	t->v[id].steal_ns += w->f.steal_ns;
}

/* Each stack row's time down its path: program, then root to leaf. */
static int add_stack(struct ftree *t, const struct report_extras *x, const struct row *w)
{
	char buf[256];
	uint32_t n = stacktab__depth(x->stack_frames, w->stack);
	add_time(t, 0, w);
	report_stack_program(x->stacks, w, buf, sizeof(buf));
	uint32_t at = child(t, 0, buf);
	if (at != UINT32_MAX)
		add_time(t, at, w);
	for (uint32_t f = n; f-- > 0 && at != UINT32_MAX;) {	/* frames are leaf first */
		uint32_t fn = stacktab__frame(x->stack_frames, w->stack, f).function;
		at = child(t, at, strtab__str(x->names, fn));
		if (at != UINT32_MAX)
			add_time(t, at, w);
	}
	return at == UINT32_MAX ? -ENOMEM : 0;
}

/* [name, cpu_ns, steal_ns, [children]]: nodes under min_ns are left out
 * (their time shows as their parent's own), to keep the page small. */
static void put_node(FILE *out, const struct ftree *t, uint32_t id, uint64_t min_ns, int depth)
{
	const struct fnode *nd = &t->v[id];
	fputc('[', out);
	json_put_string(out, id ? strtab__str(&t->labels, nd->name) : "all");
	fprintf(out, ",%" PRIu64 ",%" PRIu64 ",[", nd->cpu_ns, nd->steal_ns);
	bool first = true;
	for (uint32_t c = nd->child; c != UINT32_MAX && depth < 256; c = t->v[c].next) {
		if (t->v[c].cpu_ns + t->v[c].steal_ns < min_ns)
			continue;
		if (!first)
			fputc(',', out);
		first = false;
		put_node(out, t, c, min_ns, depth + 1);
	}
	fputs("]]", out);
}

static int write_flame(FILE *out, const struct report_extras *x)
{
	if (!x->stacks || !x->stack_frames || !x->names) {
		fputs("null", out);
		return 0;
	}
	struct ftree t = { 0 };
	hindex__init(&t.index);
	strtab__init(&t.labels);
	int err = grow_array((void **)&t.v, &t.cap, 0, sizeof(*t.v), 1024);
	if (!err) {
		t.v[t.n++] = (struct fnode){ .parent = UINT32_MAX, .child = UINT32_MAX,
					     .next = UINT32_MAX };
	}
	for (uint32_t i = 0; !err && i < x->stacks->n; i++)
		err = add_stack(&t, x, &x->stacks->v[i]);
	if (!err)	/* a 5000th of the whole: what a screen's pixel shows */
		put_node(out, &t, 0, (t.v[0].cpu_ns + t.v[0].steal_ns) / 5000 + 1, 0);
	free(t.v);
	hindex__release(&t.index);
	strtab__release(&t.labels);
	return err;
}

/*
 * JSON for inside <script>: with no '<' at all the HTML parser's
 * script-data states never leave (a name "<!--<script>" then "</script>"
 * swallowed the page's own code, "</script>" ended the data), no '>' or
 * '&' either, and U+2028/2029 escaped (line ends to older JavaScript).
 * JSON holds these only inside strings, where a \u escape means the same.
 */
static void put_script_text(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '<' || c == '>' || c == '&')
			fprintf(out, "\\u%04x", c);
		else if (c == 0xe2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
			 ((unsigned char)s[i + 2] == 0xa8 || (unsigned char)s[i + 2] == 0xa9)) {
			fputs((unsigned char)s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029", out);
			i += 2;
		} else {
			fputc(c, out);
		}
	}
}

static int write_html(FILE *out, const struct table *t, const struct report_extras *x)
{
	if (!x)
		return -EINVAL;	/* a recording's report: sampling data has none */
	char *json = NULL, *flame = NULL;
	size_t jlen = 0, flen = 0;
	FILE *j = open_memstream(&json, &jlen), *f = open_memstream(&flame, &flen);
	int err = !j || !f ? -ENOMEM : report_json.write(j, t, x);
	if (!err)
		err = write_flame(f, x);
	if (j && fclose(j))
		err = err ? err : -ENOMEM;
	if (f && fclose(f))
		err = err ? err : -ENOMEM;
	if (!err) {
		fputs(html_page_head, out);
		fputs("<script type=\"application/json\" id=\"cpuledger-data\">", out);
		put_script_text(out, json, jlen);
		fputs("</script>\n<script type=\"application/json\" id=\"cpuledger-flame\">", out);
		put_script_text(out, flame, flen);
		fputs("</script>\n", out);
		fputs(html_page_body, out);
	}
	free(json);
	free(flame);
	return err ? err : ferror(out) ? -EIO : 0;
}

const struct report_writer report_html = {
	.name = "html", .write = write_html,
	.needs = REPORT_NEEDS_STACKS,
	.by = "thread",
};
