test_audit_full_SRC := netd/trail/audit.c common/log.c common/fsutil.c
