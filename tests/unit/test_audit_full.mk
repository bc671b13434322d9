test_audit_full_SRC := netd/audit.c common/log.c common/fsutil.c
