test_addr_SRC := common/addr.c
