fuzz_audit_SRC := netd/cli/cli_table.c netd/cli/cli_help.c netd/model/config.c common/httpc.c common/yamlx.c common/addr.c common/diag.c common/log.c
