fuzz_link_SRC := common/addr.c
