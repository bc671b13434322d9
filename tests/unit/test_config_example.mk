test_config_example_SRC := netd/config.c common/yamlx.c common/addr.c common/diag.c
