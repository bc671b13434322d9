test_audit_rec_SRC := netd/trail/ctmsg.c netd/trail/pinmap.c common/addr.c
