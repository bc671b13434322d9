/*
 * test_cli - the command line's pure parts: tables sized from their
 * content (netd/cli/cli_table.c), the exit status for each HTTP status,
 * which words ask for help (netd/cli/cli_help.c), and `policy reload`'s
 * lines (cli_reload_print(), netd/cli/cli.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "netd/cli/cli.h"
#include "netd/cli/cli_help.h"
#include "netd/cli/cli_table.h"

/* Print @t into a string (caller frees). */
static char *render(struct cli_table *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	cli_table_print(t, f);
	fclose(f);
	return buf;
}

static void table_fits_long_names(void **state)
{
	static const char *const head[] = { "NAME", "POLICY", "CONNS" };
	/* a CNI sandbox name: "cni-" + 25 hex digits = 29 bytes */
	const char *r1[] = { "cni-0123456789abcdef012345678", "web80", "7" };
	const char *r2[] = { "sb1", "deny-all", "12345" };
	struct cli_table *t = cli_table_new(3, head, "llr");
	char *out;

	(void)state;
	assert_non_null(t);
	assert_int_equal(cli_table_add(t, r1), 0);
	assert_int_equal(cli_table_add(t, r2), 0);
	assert_int_equal(cli_table_width(t, 0), 29);
	assert_int_equal(cli_table_width(t, 1), 8);
	assert_int_equal(cli_table_width(t, 2), 5);
	out = render(t);
	assert_string_equal(out,
			    "NAME                          POLICY   CONNS\n"
			    "cni-0123456789abcdef012345678 web80        7\n"
			    "sb1                           deny-all 12345\n");
	free(out);
	cli_table_free(t);
}

static void table_pieces_keep_widths(void **state)
{
	static const char *const head[] = { "A", "B" };
	const char *r1[] = { "long-name", "x" };
	const char *r2[] = { "s", "y" };
	struct cli_table *t = cli_table_new(2, head, NULL);
	char *out;

	(void)state;
	assert_int_equal(cli_table_add(t, r1), 0);
	out = render(t);
	assert_string_equal(out, "A         B\nlong-name x\n");
	free(out);
	/* later rows (audit -f): no header again, the same widths */
	assert_int_equal(cli_table_add(t, r2), 0);
	out = render(t);
	assert_string_equal(out, "s         y\n");
	free(out);
	cli_table_free(t);
}

static void table_null_cell_and_limits(void **state)
{
	static const char *const head[] = { "A" };
	const char *r[] = { NULL };
	struct cli_table *t;
	char *out;

	(void)state;
	assert_null(cli_table_new(0, head, NULL));
	assert_null(cli_table_new(33, head, NULL));
	t = cli_table_new(1, head, NULL);
	assert_int_equal(cli_table_add(t, r), 0);
	out = render(t);
	assert_string_equal(out, "A\n-\n");
	free(out);
	cli_table_free(t);
	cli_table_free(NULL);
}

static void exit_from_http(void **state)
{
	(void)state;
	assert_int_equal(cli_exit_from_http(200), CLI_OK);
	assert_int_equal(cli_exit_from_http(201), CLI_OK);
	assert_int_equal(cli_exit_from_http(404), CLI_NOT_FOUND);
	assert_int_equal(cli_exit_from_http(409), CLI_CONFLICT);
	assert_int_equal(cli_exit_from_http(400), CLI_REJECTED);
	assert_int_equal(cli_exit_from_http(413), CLI_REJECTED);
	assert_int_equal(cli_exit_from_http(500), CLI_FAILED);
	assert_int_equal(cli_exit_from_http(503), CLI_FAILED);
	assert_int_equal(cli_exit_from_http(507), CLI_FAILED);
	/* the numbers are documented (netd(8)): they must not move */
	assert_int_equal(CLI_USAGE, 2);
	assert_int_equal(CLI_NOT_FOUND, 3);
	assert_int_equal(CLI_CONFLICT, 4);
	assert_int_equal(CLI_UNREACHABLE, 5);
	assert_int_equal(CLI_REJECTED, 6);
}

static void help_wanted(void **state)
{
	char *a1[] = { "sandbox", "create", "--help" };
	char *a2[] = { "exec", "sb1", "--", "ls", "--help" };
	char *a3[] = { "exec", "-h" };
	char *a4[] = { "sandbox", "list", "--json" };

	(void)state;
	assert_true(cli_help_wanted(3, a1));
	assert_false(cli_help_wanted(5, a2));	/* the command's own --help */
	assert_true(cli_help_wanted(2, a3));
	assert_false(cli_help_wanted(3, a4));
}

static void help_every_topic(void **state)
{
	const char *t;

	(void)state;
	for (size_t i = 0; (t = cli_help_topic(i)); i++) {
		char words[64], *argv[2], *sp;
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		int argc = 1;

		snprintf(words, sizeof(words), "%s", t);
		argv[0] = words;
		if ((sp = strchr(words, ' '))) {
			*sp = '\0';
			argv[1] = sp + 1;
			argc = 2;
		}
		assert_int_equal(cli_help_print(argc, argv, f), CLI_OK);
		fclose(f);
		/* its own usage line, then the exit statuses */
		assert_non_null(strstr(buf, "usage: netd "));
		assert_non_null(strstr(buf, t));
		assert_non_null(strstr(buf, "Exit status:"));
		free(buf);
	}
	{
		char *argv[] = { "bogus" };
		FILE *f = fopen("/dev/null", "w");

		assert_int_equal(cli_help_print(1, argv, f), CLI_USAGE);
		fclose(f);
	}
}

/*
 * `netd audit --help` lists only the exit statuses cli_audit() can return
 * (0, 1, 2, 3: it reads a file, no daemon needed), not the shared table's
 * daemon, conflict, rejected and changed.
 */
static void help_audit_exits(void **state)
{
	char *argv[] = { "audit" }, *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_int_equal(cli_help_print(1, argv, f), CLI_OK);
	fclose(f);
	assert_non_null(strstr(buf, "Exit status:\n  0  success"));
	assert_non_null(strstr(buf, "  3  not found: no such audit log file\n"));
	assert_null(strstr(buf, "no such sandbox"));
	assert_null(strstr(buf, "  4  "));
	assert_null(strstr(buf, "  5  "));
	assert_null(strstr(buf, "  6  "));
	assert_null(strstr(buf, "  7  "));
	free(buf);
}

/* `netd policy check|suggest|replay --help`: each lists its own exit statuses. */
static void help_policy_exits(void **state)
{
	static const struct {
		const char *sub, *has, *lacks[3];
	} c[] = {
		{ "check", "  3  not found: no such --config file or policy_dir\n",
		  { "  4  ", "  5  ", "  7  " } },
		{ "suggest", "  3  not found: no such audit log file\n", { "  5  ", "  6  ", "  7  " } },
		{ "replay", "  7  --fail-on found a change of that kind\n", { "  4  ", "  5  ", NULL } },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *argv[] = { "policy", (char *)c[i].sub }, *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		assert_int_equal(cli_help_print(2, argv, f), CLI_OK);
		fclose(f);
		assert_non_null(strstr(buf, "Exit status:\n  0  "));
		assert_non_null(strstr(buf, c[i].has));
		for (size_t k = 0; k < 3 && c[i].lacks[k]; k++)
			assert_null(strstr(buf, c[i].lacks[k]));
		free(buf);
	}
}

/* `policy reload`'s lines, from the daemon's answer (credentials only when counted). */
static void test_reload_print(void **state)
{
	static const char *const replies[] = {
		"{\"changed\":[]}",
		"{\"changed\":[],\"credentials_read\":2,\"credentials_changed\":1}",
		"{\"changed\":[{\"sandbox\":\"sb1\",\"policy\":\"agent\",\"added\":[\"a.example\"],"
		"\"removed\":[],\"pins_kept\":3,\"pins_removed\":[],\"connections_cut\":0}],"
		"\"credentials_read\":1,\"credentials_changed\":0}",
		/* only a rate changed: what changed, no empty rule diff */
		"{\"changed\":[{\"sandbox\":\"sb1\",\"policy\":\"myw\",\"added\":[],\"removed\":[],"
		"\"limits\":[\"bandwidth ingress: 20mbit -> 4mbit\"],\"pins_kept\":2,"
		"\"pins_removed\":[],\"connections_cut\":0}]}",
		/* rules and limits both */
		"{\"changed\":[{\"sandbox\":\"sb1\",\"policy\":\"agent\",\"added\":[\"a.example\"],"
		"\"removed\":[],\"limits\":[\"bandwidth egress: unlimited -> 10mbit\","
		"\"budget pypi.org tcp: 1MB/hour -> none\"],\"pins_kept\":3,\"pins_removed\":[],"
		"\"connections_cut\":0}]}",
	};
	static const char *const want[] = {
		"policies reloaded; no sandbox changed\n",
		"policies reloaded; no sandbox changed\ncredentials: 2 re-read, 1 changed\n",
		"policies reloaded; 1 sandbox changed\ncredentials: 1 re-read, 0 changed\n"
		"  sb1 (policy agent): added a.example; removed -; pins kept 3, removed 0; "
		"connections cut 0\n",
		"policies reloaded; 1 sandbox changed\n"
		"  sb1 (policy myw): bandwidth ingress: 20mbit -> 4mbit\n",
		"policies reloaded; 1 sandbox changed\n"
		"  sb1 (policy agent): added a.example; removed -; pins kept 3, removed 0; "
		"connections cut 0; bandwidth egress: unlimited -> 10mbit; "
		"budget pypi.org tcp: 1MB/hour -> none\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(replies) / sizeof(replies[0]); i++) {
		json_t *j = json_loads(replies[i], 0, NULL);
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		assert_non_null(j);
		assert_non_null(f);
		cli_reload_print(j, f);
		fclose(f);
		assert_string_equal(buf, want[i]);
		free(buf);
		json_decref(j);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_fits_long_names),
		cmocka_unit_test(table_pieces_keep_widths),
		cmocka_unit_test(table_null_cell_and_limits),
		cmocka_unit_test(exit_from_http),
		cmocka_unit_test(help_wanted),
		cmocka_unit_test(help_every_topic),
		cmocka_unit_test(help_audit_exits),
		cmocka_unit_test(help_policy_exits),
		cmocka_unit_test(test_reload_print),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
