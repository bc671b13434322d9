test_reload_plan_SRC := netd/daemon/reload_plan.c netd/daemon/policyview.c netd/sandbox.c netd/pinsrc.c netd/policy.c netd/policy_index.c common/yamlx.c common/addr.c common/diag.c
