test_cli_SRC := netd/cli_table.c netd/cli_help.c
