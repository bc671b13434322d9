fuzz_config_SRC := netd/model/config.c common/yamlx.c common/addr.c common/diag.c
