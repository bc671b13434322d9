/*
 * cli_table - text tables sized from their content, for `netd sandbox
 * list`, `netd policy list` and `netd audit`.  Not a general formatter:
 * one space between columns, left or right alignment, bytes = columns
 * (cells are ASCII: the callers escape everything else).
 */
#include "netd/cli/cli_table.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define CLI_TABLE_MAX_COLS 32

struct cli_table {
	size_t ncols;
	char align[CLI_TABLE_MAX_COLS];
	size_t width[CLI_TABLE_MAX_COLS];
	char **header;		/* ncols cells */
	char **cells;		/* n_rows * ncols, rows since the last print */
	size_t n_rows, cap_rows;
	bool header_done;
};

static void cells_free(char **c, size_t n)
{
	for (size_t i = 0; c && i < n; i++)
		free(c[i]);
}

struct cli_table *cli_table_new(size_t ncols, const char *const *headers, const char *align)
{
	struct cli_table *t;

	if (ncols == 0 || ncols > CLI_TABLE_MAX_COLS)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->ncols = ncols;
	t->header = calloc(ncols, sizeof(*t->header));
	if (!t->header)
		goto fail;
	for (size_t i = 0; i < ncols; i++) {
		t->align[i] = align && align[i] == 'r' ? 'r' : 'l';
		t->header[i] = strdup(headers[i] ? headers[i] : "");
		if (!t->header[i])
			goto fail;
		t->width[i] = strlen(t->header[i]);
	}
	return t;
fail:
	cli_table_free(t);
	return NULL;
}

int cli_table_add(struct cli_table *t, const char *const *cells)
{
	char **row;

	if (t->n_rows == t->cap_rows) {
		size_t nc = t->cap_rows ? t->cap_rows * 2 : 16;
		char **n = realloc(t->cells, nc * t->ncols * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->cells = n;
		t->cap_rows = nc;
	}
	row = t->cells + t->n_rows * t->ncols;
	for (size_t i = 0; i < t->ncols; i++) {
		row[i] = strdup(cells[i] ? cells[i] : "-");
		if (!row[i]) {
			cells_free(row, i);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < t->ncols; i++)
		if (strlen(row[i]) > t->width[i])
			t->width[i] = strlen(row[i]);
	t->n_rows++;
	return 0;
}

size_t cli_table_width(const struct cli_table *t, size_t col)
{
	return col < t->ncols ? t->width[col] : 0;
}

static void print_row(const struct cli_table *t, char *const *row, FILE *out)
{
	for (size_t i = 0; i < t->ncols; i++) {
		bool last = i + 1 == t->ncols;
		int w = (int)t->width[i];

		if (t->align[i] == 'r')
			fprintf(out, "%*s", w, row[i]);
		else if (last)
			fputs(row[i], out);
		else
			fprintf(out, "%-*s", w, row[i]);
		fputc(last ? '\n' : ' ', out);
	}
}

void cli_table_print(struct cli_table *t, FILE *out)
{
	if (!t->header_done) {
		print_row(t, t->header, out);
		t->header_done = true;
	}
	for (size_t r = 0; r < t->n_rows; r++)
		print_row(t, t->cells + r * t->ncols, out);
	cells_free(t->cells, t->n_rows * t->ncols);
	t->n_rows = 0;
}

void cli_table_free(struct cli_table *t)
{
	if (!t)
		return;
	cells_free(t->cells, t->n_rows * t->ncols);
	free(t->cells);
	cells_free(t->header, t->ncols);
	free(t->header);
	free(t);
}
