test_cli_SRC := netd/cli/cli_table.c netd/cli/cli_help.c
