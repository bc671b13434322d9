/*
 * cli_table - a text table whose columns are as wide as their widest cell
 * (CNI sandbox names are 29 bytes; fixed 20-wide columns overflowed).
 * Cells are copied; the caller escapes anything untrusted first.  Pure but
 * for cli_table_print(), which writes to the FILE it is given.
 */
#ifndef NETD_CLI_TABLE_H
#define NETD_CLI_TABLE_H

#include <stddef.h>
#include <stdio.h>

struct cli_table;

/*
 * cli_table_new() - a table of @ncols columns (1..32) headed @headers
 * (copied).  @align: one char a column, 'l' (left) or 'r' (right); NULL =
 * all left.  Caller frees with cli_table_free().  Return: NULL if out of
 * memory or @ncols is out of range.
 */
struct cli_table *cli_table_new(size_t ncols, const char *const *headers, const char *align);

/*
 * cli_table_add() - append a row of @ncols cells (copied; NULL prints "-").
 * Return: 0; -ENOMEM (the row is not added).
 */
int cli_table_add(struct cli_table *t, const char *const *cells);

/* cli_table_width() - column @col's width in bytes so far (header included). */
size_t cli_table_width(const struct cli_table *t, size_t col);

/*
 * cli_table_print() - the header and every row added since the last print,
 * then forget those rows.  Columns keep the widest width seen so far, so a
 * table printed in pieces (`netd audit -f`) stays aligned unless a later
 * cell is wider.  The last column is not padded.
 */
void cli_table_print(struct cli_table *t, FILE *out);

/* cli_table_free() - NULL-safe. */
void cli_table_free(struct cli_table *t);

#endif
