test_ledger_SRC := netd/fw/ledger.c common/addr.c
