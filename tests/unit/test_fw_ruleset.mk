test_fw_ruleset_SRC := netd/fw/ruleset.c common/addr.c
