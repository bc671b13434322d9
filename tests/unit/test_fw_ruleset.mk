test_fw_ruleset_SRC := netd/ruleset.c common/addr.c
