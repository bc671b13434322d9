fuzz_audit_SRC := netd/cli_table.c netd/cli_help.c netd/config.c common/httpc.c common/yamlx.c common/addr.c common/diag.c common/log.c
