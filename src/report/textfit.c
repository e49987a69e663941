/*
 * textfit: text for people at a terminal. A command line shown as the
 * shell would take it back (quoted, control bytes escaped, never raw), and
 * a long key cut in its middle rather than at its end: the end of a
 * command line is what tells two apart (the file cc1 compiled, the script
 * python ran), and a cut end hid it.
 */
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../core/banned.h"

/* The mark where a string was cut. */
#define CUT_MARK "..."
#define CUT_COLS 3

/* Bytes the shell takes as they are, outside quotes. */
static bool shell_plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("@%+=:,./-_", c);
}

/* Whether the UTF-8 sequence at p (len bytes, 0: not one) cannot be shown
 * inside plain quotes: C0, DEL, C1 or not UTF-8. */
static bool needs_escape(const unsigned char *p, size_t len)
{
	return !len || p[0] < 0x20 || p[0] == 0x7f || (len == 2 && p[0] == 0xc2 && p[1] < 0xa0);
}

/* $'...': every byte that is not printable UTF-8 as \n, \t or \xHH. */
static void put_ansi_c(FILE *f, const unsigned char *p, size_t n)
{
	fputs("$'", f);
	for (size_t i = 0; i < n;) {
		size_t len = utf8_seq(p + i, n - i);
		if (needs_escape(p + i, len)) {
			for (size_t k = 0; k < (len ? len : 1); k++) {
				unsigned char c = p[i + k];
				if (c == '\n')
					fputs("\\n", f);
				else if (c == '\t')
					fputs("\\t", f);
				else if (c == '\r')
					fputs("\\r", f);
				else
					fprintf(f, "\\x%02x", c);
			}
			i += len ? len : 1;
			continue;
		}
		if (p[i] == '\'' || p[i] == '\\')
			putc('\\', f);
		fwrite(p + i, 1, len, f);
		i += len;
	}
	putc('\'', f);
}

static void put_word(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	bool plain = n > 0, escape = false;
	for (size_t i = 0; i < n;) {
		size_t len = utf8_seq(p + i, n - i);
		escape |= needs_escape(p + i, len);
		plain &= len == 1 && shell_plain(p[i]);
		i += len ? len : 1;
	}
	if (escape) {
		put_ansi_c(f, p, n);
		return;
	}
	if (plain) {
		fputs(s, f);
		return;
	}
	putc('\'', f);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			putc(*s, f);
	putc('\'', f);
}

char *shell_quote(const char *const *argv)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (!f)
		return NULL;
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			putc(' ', f);
		put_word(f, argv[i]);
	}
	if (fclose(f)) {
		free(buf);
		errno = ENOMEM;
		return NULL;
	}
	return buf;
}

/* One character for a terminal, as text_put writes it. */
static void put_char(FILE *out, const unsigned char *p, size_t len)
{
	if (!len)
		fputs("\xef\xbf\xbd", out);
	else if (needs_escape(p, len))
		putc('?', out);
	else
		fwrite(p, 1, len, out);
}

int text_put_middle(FILE *out, const char *s, int max, int pad)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), chars = 0;
	for (size_t i = 0; i < n; chars++) {
		size_t len = utf8_seq(p + i, n - i);
		i += len ? len : 1;
	}
	if (max <= CUT_COLS + 1 || chars <= (size_t)max)
		return text_put(out, s, max, pad);
	/* a third of what fits from the start, the rest from the end */
	size_t head = (size_t)(max - CUT_COLS) / 3, tail_from = chars - ((size_t)max - CUT_COLS - head);
	size_t c = 0;
	for (size_t i = 0; i < n; c++) {
		size_t len = utf8_seq(p + i, n - i);
		if (c == head)
			fputs(CUT_MARK, out);
		if (c < head || c >= tail_from)
			put_char(out, p + i, len);
		i += len ? len : 1;
	}
	int cols = max;
	for (; cols < pad; cols++)
		putc(' ', out);
	return cols;
}
