test_grace_SRC := netd/grace.c netd/acct.c netd/ctmsg.c netd/policy.c netd/policy_parse.c netd/policy_names.c netd/policy_index.c common/log.c common/yamlx.c common/addr.c common/diag.c
