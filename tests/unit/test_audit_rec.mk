test_audit_rec_SRC := netd/ctmsg.c netd/pinmap.c common/addr.c
